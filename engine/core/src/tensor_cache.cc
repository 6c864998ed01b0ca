// TensorCache (tensor_cache.h): one mutex guards the LRU list, its index and the table of loads
// in flight; loaders run without it. Thread-safe.
#include "tensor_cache.h"

#include <string>
#include <utility>
#include <vector>

namespace litmus {

TensorCache::TensorCache(size_t budget_bytes) : budget_bytes_(budget_bytes) {}

StatusOr<TensorPtr> TensorCache::GetOrLoad(Key key, LoaderRef loader) {
  std::unique_lock<internal::AdaptiveMutex> lock(mu_);
  if (auto it = index_.find(key); it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    ++hits_;
    return it->second->tensor;
  }
  if (auto it = in_flight_.find(key); it != in_flight_.end()) {
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
  if (result.ok() && bytes <= budget_bytes_) {
    lru_.push_front(Node{key, *result, bytes});
    index_.emplace(key, lru_.begin());
    bytes_ += bytes;
    EvictLocked();
  }
  flight->result = result;
  flight->done = true;
  flight->done_cv.notify_all();
}

void TensorCache::EvictLocked() {
  while (bytes_ > budget_bytes_ && !lru_.empty()) {
    const Node& victim = lru_.back();
    bytes_ -= victim.bytes;
    index_.erase(victim.key);
    lru_.pop_back();
  }
}

bool TensorCache::Contains(Key key) const {
  std::lock_guard<internal::AdaptiveMutex> lock(mu_);
  return index_.contains(key) || in_flight_.contains(key);
}

void TensorCache::PresenceOf(std::span<const Key> keys, std::span<Presence> presence) const {
  std::lock_guard<internal::AdaptiveMutex> lock(mu_);
  for (size_t i = 0; i < keys.size(); ++i) {
    presence[i] = index_.contains(keys[i])       ? Presence::kCached
                  : in_flight_.contains(keys[i]) ? Presence::kLoading
                                                 : Presence::kAbsent;
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
  if (bytes > budget_bytes_ || index_.contains(key) || in_flight_.contains(key)) return;
  ++misses_;
  lru_.push_front(Node{key, std::move(tensor), bytes});
  index_.emplace(key, lru_.begin());
  bytes_ += bytes;
  EvictLocked();
}

void TensorCache::Erase(Key key) { EraseAll(std::span(&key, 1)); }

void TensorCache::EraseAll(std::span<const Key> keys) {
  std::vector<TensorPtr> dropped;  // freed after the lock is released
  dropped.reserve(keys.size());
  std::lock_guard<internal::AdaptiveMutex> lock(mu_);
  for (const Key key : keys) {
    if (TensorPtr tensor = EraseLocked(key)) dropped.push_back(std::move(tensor));
  }
}

TensorPtr TensorCache::EraseLocked(Key key) {
  const auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  TensorPtr tensor = std::move(it->second->tensor);
  bytes_ -= it->second->bytes;
  lru_.erase(it->second);
  index_.erase(it);
  return tensor;
}

void TensorCache::Clear() {
  std::lock_guard<internal::AdaptiveMutex> lock(mu_);
  lru_.clear();
  index_.clear();
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
