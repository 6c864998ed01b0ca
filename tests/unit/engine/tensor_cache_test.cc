// Tests of TensorCache: hits and misses, LRU eviction by bytes, oversized tensors, single-flight
// loading from 8 threads, errors shared with waiters but never cached, exceptions, Clear().
#include "tensor_cache.h"

#include <atomic>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace litmus {
namespace {

TensorPtr MakeTensor(size_t float_count) {
  auto owner = std::make_shared<std::vector<float>>(float_count, 1.0f);
  return std::make_shared<const Tensor>(DType::kFloat32,
                                        std::vector<int64_t>{static_cast<int64_t>(float_count)},
                                        std::as_bytes(std::span(*owner)), owner);
}

// A loader that counts its calls and returns a fresh tensor of `floats` elements.
std::function<StatusOr<TensorPtr>()> Counting(std::atomic<int>* calls, size_t floats = 256) {
  return [calls, floats]() -> StatusOr<TensorPtr> {
    ++*calls;
    return MakeTensor(floats);
  };
}

TEST(TensorCacheTest, HitsAndMisses) {
  TensorCache cache(1 << 20);
  std::atomic<int> calls = 0;
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr a, cache.GetOrLoad(1, Counting(&calls)));
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr a2, cache.GetOrLoad(1, Counting(&calls)));
  EXPECT_EQ(a, a2);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(cache.misses(), 1u);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.bytes(), a->memory_bytes());
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr b, cache.GetOrLoad(2, Counting(&calls)));
  EXPECT_NE(a, b);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(cache.misses(), 2u);
  EXPECT_EQ(cache.bytes(), a->memory_bytes() + b->memory_bytes());
}

TEST(TensorCacheTest, EvictsLeastRecentlyUsedByBytes) {
  const size_t one = MakeTensor(1000)->memory_bytes();
  TensorCache cache(one * 2 + one / 2);  // room for two
  std::atomic<int> calls = 0;
  ASSERT_TRUE(cache.GetOrLoad(1, Counting(&calls, 1000)).ok());
  ASSERT_TRUE(cache.GetOrLoad(2, Counting(&calls, 1000)).ok());
  ASSERT_TRUE(cache.GetOrLoad(1, Counting(&calls, 1000)).ok());  // a is now the most recent
  ASSERT_TRUE(cache.GetOrLoad(3, Counting(&calls, 1000)).ok());  // evicts b
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(cache.bytes(), 2 * one);
  ASSERT_TRUE(cache.GetOrLoad(1, Counting(&calls, 1000)).ok());
  ASSERT_TRUE(cache.GetOrLoad(3, Counting(&calls, 1000)).ok());
  EXPECT_EQ(calls, 3) << "a and c must still be cached";
  ASSERT_TRUE(cache.GetOrLoad(2, Counting(&calls, 1000)).ok());
  EXPECT_EQ(calls, 4) << "b must have been evicted";
  EXPECT_LE(cache.bytes(), one * 2 + one / 2);
}

TEST(TensorCacheTest, TensorLargerThanBudgetIsReturnedButNotKept) {
  TensorCache cache(1000);
  std::atomic<int> calls = 0;
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr t, cache.GetOrLoad(4, Counting(&calls, 10000)));
  EXPECT_EQ(t->num_elements(), 10000);
  EXPECT_EQ(cache.bytes(), 0u);
  ASSERT_TRUE(cache.GetOrLoad(4, Counting(&calls, 10000)).ok());
  EXPECT_EQ(calls, 2);
}

TEST(TensorCacheTest, SingleFlightAcrossEightThreads) {
  TensorCache cache(1 << 20);
  std::atomic<int> calls = 0;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto loader = [&]() -> StatusOr<TensorPtr> {
    ++calls;
    released.wait();  // hold the load until every other thread is waiting on it
    return MakeTensor(64);
  };
  std::vector<TensorPtr> results(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      StatusOr<TensorPtr> r = cache.GetOrLoad(5, loader);
      if (r.ok()) results[i] = *r;
    });
  }
  // The seven that did not load count as hits as soon as they wait.
  while (cache.hits() + cache.misses() < 8) std::this_thread::yield();
  release.set_value();
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(cache.misses(), 1u);
  EXPECT_EQ(cache.hits(), 7u);
  ASSERT_NE(results[0], nullptr);
  for (const TensorPtr& r : results) EXPECT_EQ(r, results[0]);
}

TEST(TensorCacheTest, ErrorsAreSharedWithWaitersButNotCached) {
  TensorCache cache(1 << 20);
  std::atomic<int> calls = 0;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto failing = [&]() -> StatusOr<TensorPtr> {
    ++calls;
    released.wait();
    return DataLossError("bad record");
  };
  std::vector<Status> statuses(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] { statuses[i] = cache.GetOrLoad(5, failing).status(); });
  }
  while (cache.hits() + cache.misses() < 4) std::this_thread::yield();
  release.set_value();
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(calls, 1);
  for (const Status& s : statuses) EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
  EXPECT_EQ(cache.bytes(), 0u);

  // The next call loads again, and this time succeeds.
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr t, cache.GetOrLoad(5, Counting(&calls)));
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(cache.misses(), 2u);
}

TEST(TensorCacheTest, NullTensorIsAnError) {
  TensorCache cache(1 << 20);
  StatusOr<TensorPtr> r = cache.GetOrLoad(5, []() -> StatusOr<TensorPtr> { return TensorPtr(); });
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST(TensorCacheTest, ThrowingLoaderPropagatesAndLeavesNoFlight) {
  TensorCache cache(1 << 20);
  EXPECT_THROW((void)cache.GetOrLoad(5, []() -> StatusOr<TensorPtr> { throw std::runtime_error("x"); }),
               std::runtime_error);
  std::atomic<int> calls = 0;
  ASSERT_TRUE(cache.GetOrLoad(5, Counting(&calls)).ok());
  EXPECT_EQ(calls, 1);
}

TEST(TensorCacheTest, ClearDropsEverything) {
  TensorCache cache(1 << 20);
  std::atomic<int> calls = 0;
  ASSERT_TRUE(cache.GetOrLoad(1, Counting(&calls)).ok());
  ASSERT_TRUE(cache.GetOrLoad(2, Counting(&calls)).ok());
  EXPECT_GT(cache.bytes(), 0u);
  cache.Clear();
  EXPECT_EQ(cache.bytes(), 0u);
  ASSERT_TRUE(cache.GetOrLoad(1, Counting(&calls)).ok());
  EXPECT_EQ(calls, 3);
}

// The LRU order across hits, erases from its middle, inserts and a Clear (the ring is
// intrusive: a wrong link would evict the wrong key or lose one).
TEST(TensorCacheTest, EvictionOrderAcrossHitsErasesAndClear) {
  const size_t one = MakeTensor(256)->memory_bytes();
  TensorCache cache(one * 3);  // room for three
  std::atomic<int> calls{0};
  const auto present = [&cache](std::vector<TensorCache::Key> keys) {
    std::vector<TensorCache::Key> out;
    for (TensorCache::Key k : keys) {
      if (cache.Contains(k)) out.push_back(k);
    }
    return out;
  };
  for (TensorCache::Key k : {1, 2, 3}) cache.Insert(k, MakeTensor(256));
  ASSERT_TRUE(cache.GetOrLoad(1, Counting(&calls)).ok());  // most recent first: 1 3 2
  cache.Erase(3);                                          // 1 2
  cache.Insert(4, MakeTensor(256));                        // 4 1 2
  cache.Insert(5, MakeTensor(256));                        // 5 4 1 (2 evicted)
  EXPECT_EQ(present({1, 2, 3, 4, 5}), (std::vector<TensorCache::Key>{1, 4, 5}));
  ASSERT_TRUE(cache.GetOrLoad(4, Counting(&calls)).ok());  // 4 5 1
  ASSERT_TRUE(cache.GetOrLoad(6, Counting(&calls)).ok());  // 6 4 5 (1 evicted)
  EXPECT_EQ(present({1, 4, 5, 6}), (std::vector<TensorCache::Key>{4, 5, 6}));
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(cache.bytes(), 3 * one);
  cache.Clear();
  EXPECT_EQ(present({4, 5, 6}), (std::vector<TensorCache::Key>{}));
  for (TensorCache::Key k : {7, 8, 9, 10}) cache.Insert(k, MakeTensor(256));
  EXPECT_EQ(present({7, 8, 9, 10}), (std::vector<TensorCache::Key>{8, 9, 10}));
  EXPECT_EQ(cache.bytes(), 3 * one);
}

// Many threads over a few keys with a small budget: no deadlock, every result is right.
TEST(TensorCacheTest, ConcurrentMixedUse) {
  const size_t one = MakeTensor(100)->memory_bytes();
  TensorCache cache(one * 3);
  std::atomic<int> wrong = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      for (int j = 0; j < 2000; ++j) {
        const int key = (i * 7 + j) % 5;
        StatusOr<TensorPtr> r = cache.GetOrLoad(static_cast<TensorCache::Key>(key), [key]() -> StatusOr<TensorPtr> {
          return MakeTensor(100 + static_cast<size_t>(key));
        });
        if (!r.ok() || (*r)->num_elements() != 100 + key) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(cache.hits() + cache.misses(), 16000u);
  EXPECT_LE(cache.bytes(), one * 3);
}

TEST(TensorCacheTest, InsertContainsErase) {
  TensorCache cache(4096);
  std::atomic<int> calls{0};
  EXPECT_FALSE(cache.Contains(1));
  const TensorPtr a = MakeTensor(256);
  cache.Insert(1, a);
  EXPECT_TRUE(cache.Contains(1));
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr got, cache.GetOrLoad(1, Counting(&calls)));
  EXPECT_EQ(got.get(), a.get());
  EXPECT_EQ(calls.load(), 0);
  cache.Insert(1, MakeTensor(256));  // already cached: kept as it was
  LITMUS_ASSERT_OK_AND_ASSIGN(got, cache.GetOrLoad(1, Counting(&calls)));
  EXPECT_EQ(got.get(), a.get());
  cache.Insert(6, MakeTensor(4096));  // larger than the budget: not kept
  EXPECT_FALSE(cache.Contains(6));
  const size_t before = cache.bytes();
  cache.Erase(1);
  EXPECT_FALSE(cache.Contains(1));
  EXPECT_EQ(cache.bytes(), before - a->memory_bytes());
  cache.Erase(1);  // absent: nothing happens
  LITMUS_ASSERT_OK(cache.GetOrLoad(1, Counting(&calls)).status());
  EXPECT_EQ(calls.load(), 1);
  // Inserts evict by bytes like loads do.
  for (int i = 0; i < 8; ++i) cache.Insert(100 + static_cast<TensorCache::Key>(i), MakeTensor(256));
  EXPECT_LE(cache.bytes(), 4096u);
  EXPECT_TRUE(cache.Contains(107));
  EXPECT_FALSE(cache.Contains(100));
}

// The batch forms do what the single-key calls do, key by key and in order.
TEST(TensorCacheTest, BatchInsertContainsErase) {
  TensorCache cache(4096);
  const TensorPtr a = MakeTensor(256);
  const TensorPtr b = MakeTensor(256);
  cache.Insert(1, a);
  std::vector<std::pair<TensorCache::Key, TensorPtr>> items = {
      {1, MakeTensor(256)},  // already cached: kept as it was
      {2, b},
      {3, MakeTensor(4096)},  // larger than the budget: not kept
      {2, MakeTensor(256)},   // a key twice: the first stays
  };
  cache.InsertAll(items);
  std::atomic<int> calls{0};
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr got, cache.GetOrLoad(1, Counting(&calls)));
  EXPECT_EQ(got.get(), a.get());
  LITMUS_ASSERT_OK_AND_ASSIGN(got, cache.GetOrLoad(2, Counting(&calls)));
  EXPECT_EQ(got.get(), b.get());
  EXPECT_EQ(calls.load(), 0);
  using Presence = TensorCache::Presence;
  const std::vector<TensorCache::Key> keys = {3, 2, 9, 1};
  std::vector<Presence> presence(keys.size());
  cache.PresenceOf(keys, presence);
  EXPECT_EQ(presence, (std::vector<Presence>{Presence::kAbsent, Presence::kCached, Presence::kAbsent, Presence::kCached}));
  EXPECT_EQ(cache.bytes(), a->memory_bytes() + b->memory_bytes());
  const std::vector<TensorCache::Key> drop = {2, 9, 2};
  cache.EraseAll(drop);
  cache.PresenceOf(keys, presence);
  EXPECT_EQ(presence[1], Presence::kAbsent);
  EXPECT_EQ(presence[3], Presence::kCached);
  // A key whose load is in progress is "loading" (that load may still fail), then cached.
  const std::vector<TensorCache::Key> loading_key = {9};
  std::vector<Presence> during(1);
  LITMUS_ASSERT_OK(cache.GetOrLoad(9, [&]() -> StatusOr<TensorPtr> {
                          cache.PresenceOf(loading_key, during);
                          return MakeTensor(256);
                        }).status());
  EXPECT_EQ(during[0], Presence::kLoading);
  cache.PresenceOf(loading_key, during);
  EXPECT_EQ(during[0], Presence::kCached);
  cache.Erase(9);
  EXPECT_EQ(cache.bytes(), a->memory_bytes());
  // Inserts in a batch evict by bytes as single inserts do.
  std::vector<std::pair<TensorCache::Key, TensorPtr>> many;
  for (int i = 0; i < 8; ++i) many.emplace_back(100 + static_cast<TensorCache::Key>(i), MakeTensor(256));
  cache.InsertAll(many);
  EXPECT_LE(cache.bytes(), 4096u);
  EXPECT_TRUE(cache.Contains(107));
  EXPECT_FALSE(cache.Contains(1));  // the least recently used went first
}

}  // namespace
}  // namespace litmus
