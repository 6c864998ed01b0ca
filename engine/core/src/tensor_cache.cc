// TensorCache (tensor_cache.h): one mutex guards the index with its LRU ring and the table of
// loads in flight; loaders run without it, and dropped tensors are freed after it is released.
// Thread-safe.
#include "tensor_cache.h"

#include <string>
#include <utility>
#include <vector>

namespace litmus {

TensorCache::TensorCache(size_t budget_bytes) : budget_bytes_(budget_bytes) { lru_.prev = lru_.next = &lru_; }

StatusOr<TensorPtr> TensorCache::GetOrLoad(Key key, LoaderRef loader) {
  std::unique_lock<internal::AdaptiveMutex> lock(mu_);
  if (auto it = index_.find(key); it != index_.end()) {
    Node* node = &it->second;
    Unlink(node);
    LinkFront(node);
    ++hits_;
    return node->tensor;
  }
  if (auto it = in_flight_.empty() ? in_flight_.end() : in_flight_.find(key); it != in_flight_.end()) {
    std::shared_ptr<Flight> flight = it->second;
    ++hits_;
    flight->done_cv.wait(lock, [&flight] { return flight->done; });
    return flight->result;
  }
  auto flight = std::make_shared<Flight>();
  in_flight_.emplace(key, flight);
  ++misses_;
  lock.unlock();

  StatusOr<TensorPtr> result = InternalError("load not finished");
  try {
    result = loader();
  } catch (...) {
    lock.lock();
    FinishLoadLocked(key, flight, InternalError("loading tensor cache key " + std::to_string(key) + " threw an exception"), 0);
    throw;
  }
  if (result.ok() && *result == nullptr) {
    result = InternalError("loading tensor cache key " + std::to_string(key) + " returned no tensor");
  }
  const size_t bytes = result.ok() ? (*result)->memory_bytes() : 0;
  lock.lock();
  FinishLoadLocked(key, flight, result, bytes);
  return result;
}

void TensorCache::FinishLoadLocked(Key key, const std::shared_ptr<Flight>& flight,
                                   const StatusOr<TensorPtr>& result, size_t bytes) {
  in_flight_.erase(key);
  // The in-flight entry kept other loads of `key` out, so `key` cannot be cached already.
  if (result.ok() && bytes <= budget_bytes_) AddLocked(key, *result, bytes);
  flight->result = result;
  flight->done = true;
  flight->done_cv.notify_all();
}

void TensorCache::AddLocked(Key key, TensorPtr tensor, size_t bytes) {
  Node& node = index_.try_emplace(key).first->second;
  node.key = key;
  node.tensor = std::move(tensor);
  node.bytes = bytes;
  LinkFront(&node);
  bytes_ += bytes;
  EvictLocked();
}

void TensorCache::EvictLocked() {
  while (bytes_ > budget_bytes_ && lru_.prev != &lru_) {
    Node* victim = lru_.prev;
    bytes_ -= victim->bytes;
    Unlink(victim);
    index_.erase(victim->key);
  }
}

bool TensorCache::Contains(Key key) const {
  std::lock_guard<internal::AdaptiveMutex> lock(mu_);
  return index_.contains(key) || LoadingLocked(key);
}

void TensorCache::PresenceOf(std::span<const Key> keys, std::span<Presence> presence,
                             std::span<TensorPtr> values) const {
  std::lock_guard<internal::AdaptiveMutex> lock(mu_);
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto it = index_.find(keys[i]);
    if (it != index_.end()) {
      presence[i] = Presence::kCached;
      if (!values.empty()) values[i] = it->second.tensor;
    } else {
      presence[i] = LoadingLocked(keys[i]) ? Presence::kLoading : Presence::kAbsent;
    }
  }
}

void TensorCache::Insert(Key key, TensorPtr tensor) {
  std::pair<Key, TensorPtr> item(key, std::move(tensor));
  InsertAll(std::span(&item, 1));
}

void TensorCache::InsertAll(std::span<std::pair<Key, TensorPtr>> items) {
  std::lock_guard<internal::AdaptiveMutex> lock(mu_);
  for (auto& [key, tensor] : items) InsertLocked(key, std::move(tensor));
}

void TensorCache::InsertLocked(Key key, TensorPtr tensor) {
  if (tensor == nullptr) return;
  const size_t bytes = tensor->memory_bytes();
  if (bytes > budget_bytes_ || index_.contains(key) || LoadingLocked(key)) return;
  ++misses_;
  AddLocked(key, std::move(tensor), bytes);
}

void TensorCache::Erase(Key key) { EraseAll(std::span(&key, 1)); }

void TensorCache::EraseAll(std::span<const Key> keys) {
  std::vector<Index::node_type> dropped;  // nodes and tensors, freed after the lock is released
  dropped.reserve(keys.size());
  std::lock_guard<internal::AdaptiveMutex> lock(mu_);
  for (const Key key : keys) {
    const auto it = index_.find(key);
    if (it == index_.end()) continue;
    bytes_ -= it->second.bytes;
    Unlink(&it->second);
    dropped.push_back(index_.extract(it));
  }
}

void TensorCache::Clear() {
  Index dropped;  // freed after the lock is released
  std::lock_guard<internal::AdaptiveMutex> lock(mu_);
  dropped.swap(index_);
  lru_.prev = lru_.next = &lru_;
  bytes_ = 0;
}

size_t TensorCache::bytes() const {
  std::lock_guard<internal::AdaptiveMutex> lock(mu_);
  return bytes_;
}

size_t TensorCache::hits() const {
  std::lock_guard<internal::AdaptiveMutex> lock(mu_);
  return hits_;
}

size_t TensorCache::misses() const {
  std::lock_guard<internal::AdaptiveMutex> lock(mu_);
  return misses_;
}

}  // namespace litmus
