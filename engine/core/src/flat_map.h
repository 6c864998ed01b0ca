// FlatMap: an ordered map kept as a sorted vector, for the trial catalog's per-tensor step maps.
// Steps arrive almost always in increasing order, so inserting is an append, and lookups (the
// reader's hot path: several per tensor read) binary-search contiguous memory instead of chasing
// red-black tree nodes scattered over the heap. Unlike std::map, inserting a new key moves
// elements: references and iterators are invalidated by every insertion of a new key.
// Thread-compatible (const members may run concurrently with each other).
#pragma once

#include <algorithm>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

namespace litmus::internal {

template <typename Key, typename Value>
class FlatMap {
 public:
  using value_type = std::pair<Key, Value>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  size_t size() const { return items_.size(); }
  size_t capacity() const { return items_.capacity(); }
  void reserve(size_t n) { items_.reserve(n); }
  bool empty() const { return items_.empty(); }
  const value_type& back() const { return items_.back(); }  // REQUIRES: !empty()
  // The i-th item in key order. REQUIRES: i < size().
  const value_type& item(size_t i) const { return items_[i]; }

  const_iterator lower_bound(const Key& key) const {
    if (!items_.empty() && items_.back().first < key) return items_.end();  // the common miss
    return std::lower_bound(items_.begin(), items_.end(), key,
                            [](const value_type& item, const Key& k) { return item.first < k; });
  }
  iterator lower_bound(const Key& key) {
    return items_.begin() + (std::as_const(*this).lower_bound(key) - items_.cbegin());
  }
  const_iterator find(const Key& key) const {
    const auto it = lower_bound(key);
    return it != items_.end() && !(key < it->first) ? it : items_.end();
  }
  iterator find(const Key& key) { return items_.begin() + (std::as_const(*this).find(key) - items_.cbegin()); }
  bool contains(const Key& key) const { return find(key) != items_.end(); }
  const Value& at(const Key& key) const {
    const auto it = find(key);
    if (it == items_.end()) throw std::out_of_range("FlatMap::at: no such key");
    return it->second;
  }

  // Inserts (key, Value(args...)) unless `key` is present; like std::map::try_emplace.
  template <typename... Args>
  std::pair<iterator, bool> try_emplace(const Key& key, Args&&... args) {
    iterator it = lower_bound(key);
    if (it != items_.end() && !(key < it->first)) return {it, false};
    it = items_.emplace(it, std::piecewise_construct, std::forward_as_tuple(key),
                        std::forward_as_tuple(std::forward<Args>(args)...));
    return {it, true};
  }
  Value& operator[](const Key& key) { return try_emplace(key).first->second; }

 private:
  std::vector<value_type> items_;
};

}  // namespace litmus::internal
