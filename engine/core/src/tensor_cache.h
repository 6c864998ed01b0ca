// TensorCache: the decoded-tensor cache of a trial, a byte-bounded LRU (sizes from
// Tensor::memory_bytes()) keyed by an opaque 64-bit key, with single-flight loading: concurrent
// GetOrLoad calls for the same key run the loader once and share its result.
// Thread-safe: every member may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>

#include "adaptive_mutex.h"
#include "litmus/engine/tensor.h"
#include "litmus/status.h"

namespace litmus {

class TensorCache {
 public:
  // What identifies a cached tensor; the trial reader uses the address of the record's index
  // entry in its catalog, which is stable for the trial's life and cheaper to hash and compare
  // than a "name, step, worker" string (a lookup happens for every tensor read).
  using Key = uint64_t;

  // Cached tensors are evicted, least recently used first, once their memory_bytes() add up to
  // more than `budget_bytes`. A tensor larger than the whole budget is returned but not kept.
  explicit TensorCache(size_t budget_bytes);
  TensorCache(const TensorCache&) = delete;
  TensorCache& operator=(const TensorCache&) = delete;

  // Returns the cached tensor for `key`, or runs `loader` (outside the cache's lock) and caches
  // what it returns. While one call loads a key, other calls for that key wait for it and get
  // the same result, errors included; errors are never cached, so a later call loads again.
  // A loader that returns a null TensorPtr yields Internal. If `loader` throws, waiters get
  // Internal and the exception propagates to the calling thread.
  // (`loader` is borrowed for the call, not copied: a cache hit costs no allocation for it.)
  class LoaderRef {
   public:
    template <typename F>
      requires std::is_invocable_r_v<StatusOr<TensorPtr>, F&>
    LoaderRef(F&& f)  // NOLINT(google-explicit-constructor): a by-reference callable
        : callable_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
          call_([](void* c) -> StatusOr<TensorPtr> { return (*static_cast<std::remove_reference_t<F>*>(c))(); }) {}
    StatusOr<TensorPtr> operator()() const { return call_(callable_); }

   private:
    void* callable_;
    StatusOr<TensorPtr> (*call_)(void*);
  };
  StatusOr<TensorPtr> GetOrLoad(Key key, LoaderRef loader);

  // True if `key` is cached or being loaded (does not count as a hit or touch the LRU order).
  bool Contains(Key key) const;
  // Where a key stands: cached (its load succeeded), being loaded (by a GetOrLoad that may still
  // fail), or neither.
  enum class Presence : uint8_t { kAbsent, kCached, kLoading };
  // presence[i] for keys[i], for every i, under one acquisition of the lock (no hit counted, LRU
  // order untouched), and with `values` the cached tensor of each kCached key in values[i].
  // REQUIRES: presence.size() == keys.size(), and values.size() too unless it is empty.
  void PresenceOf(std::span<const Key> keys, std::span<Presence> presence, std::span<TensorPtr> values = {}) const;
  // Caches `tensor` under `key` unless `key` is already cached or being loaded (then it does
  // nothing): for tensors decoded in a batch rather than by a loader. Counts as a miss.
  void Insert(Key key, TensorPtr tensor);
  // Insert for every item, in order, under one acquisition of the lock (a prefetch caches the
  // tensors of one read together: with small tensors, taking the lock per tensor showed as
  // contention with the readers).
  void InsertAll(std::span<std::pair<Key, TensorPtr>> items);
  // Drops `key` if cached (a hint that nobody needs it any more; a later GetOrLoad loads again).
  void Erase(Key key);
  // Erase for every key, under one acquisition of the lock.
  void EraseAll(std::span<const Key> keys);
  // Drops every cached tensor (loads in flight are unaffected and still cache their result).
  void Clear();

  size_t bytes() const;   // sum of memory_bytes() of the cached tensors
  size_t hits() const;    // calls served from the cache or by waiting on another call's load
  size_t misses() const;  // calls that ran the loader

 private:
  // A cached tensor. Nodes live in index_ (an unordered_map's nodes never move) and are chained
  // in LRU order through prev/next: a hit relinks two pointers, and caching a tensor allocates
  // one node (a std::list beside the index took a second allocation per tensor).
  struct Node {
    Key key = 0;
    TensorPtr tensor;
    size_t bytes = 0;
    Node* prev = nullptr;
    Node* next = nullptr;
  };
  using Index = std::unordered_map<Key, Node>;
  // One load in progress; waiters hold a reference until they have read the result.
  struct Flight {
    std::condition_variable_any done_cv;
    bool done = false;
    StatusOr<TensorPtr> result = InternalError("load not finished");
  };

  // Publishes `result` of the load of `key` (caching it if OK). REQUIRES: mu_ held.
  void FinishLoadLocked(Key key, const std::shared_ptr<Flight>& flight,
                        const StatusOr<TensorPtr>& result, size_t bytes);
  // Caches `tensor` (of `bytes`) under `key`, not cached yet, as the most recent. REQUIRES: mu_.
  void AddLocked(Key key, TensorPtr tensor, size_t bytes);
  void EvictLocked();
  void InsertLocked(Key key, TensorPtr tensor);
  // Whether a load of `key` is in flight. REQUIRES: mu_ held. (Usually none is: no hashing then.)
  bool LoadingLocked(Key key) const { return !in_flight_.empty() && in_flight_.contains(key); }
  // LRU list operations. REQUIRES: mu_ held.
  void LinkFront(Node* node) {
    node->prev = &lru_;
    node->next = lru_.next;
    lru_.next->prev = node;
    lru_.next = node;
  }
  static void Unlink(Node* node) {
    node->prev->next = node->next;
    node->next->prev = node->prev;
  }

  const size_t budget_bytes_;
  mutable internal::AdaptiveMutex mu_;
  Index index_;
  Node lru_;  // sentinel of the LRU ring: lru_.next is the most recently used, lru_.prev the least
  std::unordered_map<Key, std::shared_ptr<Flight>> in_flight_;
  size_t bytes_ = 0;
  size_t hits_ = 0;
  size_t misses_ = 0;
};

}  // namespace litmus
