// RequiredSteps: the steps of one TensorRequirement (host_api.h): a vector of int64 that keeps up
// to kInline steps in itself. A rule almost always requires a tensor at one or two steps (its
// step, and maybe an earlier one), and requirement lists are copied per rule and step (declared,
// predicted, recorded in a worker's history): with std::vector each copy of each requirement was
// an allocation (malloc/free were ~15 % of the runner thread's time in a 20-rule job). Value
// semantics, not thread-safe (as std::vector).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <utility>

namespace litmus {

class RequiredSteps {
 public:
  using value_type = int64_t;
  using size_type = size_t;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  static constexpr size_t kInline = 2;

  RequiredSteps() = default;
  RequiredSteps(std::initializer_list<int64_t> steps) { Append(steps.begin(), steps.size()); }
  RequiredSteps(const RequiredSteps& other) { Append(other.data(), other.size_); }
  RequiredSteps(RequiredSteps&& other) noexcept { Steal(other); }
  RequiredSteps& operator=(const RequiredSteps& other) {
    if (this != &other) {
      size_ = 0;
      Append(other.data(), other.size_);
    }
    return *this;
  }
  RequiredSteps& operator=(RequiredSteps&& other) noexcept {
    if (this != &other) {
      Free();
      Steal(other);
    }
    return *this;
  }
  ~RequiredSteps() { Free(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return heap_ != nullptr ? heap_ : inline_; }
  const int64_t* data() const { return heap_ != nullptr ? heap_ : inline_; }
  iterator begin() { return data(); }
  iterator end() { return data() + size_; }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size_; }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t back() const { return data()[size_ - 1]; }

  void push_back(int64_t step) { Append(&step, 1); }
  void Append(const int64_t* steps, size_t count) {
    if (count == 0) return;
    Reserve(size_ + count);
    std::memcpy(data() + size_, steps, count * sizeof(int64_t));
    size_ += count;
  }
  // Keeps the first `size` steps. REQUIRES: size <= size().
  void Truncate(size_t size) { size_ = size; }
  void clear() { size_ = 0; }

  friend bool operator==(const RequiredSteps& a, const RequiredSteps& b) {
    return a.size_ == b.size_ && (a.size_ == 0 || std::memcmp(a.data(), b.data(), a.size_ * sizeof(int64_t)) == 0);
  }

 private:
  void Reserve(size_t capacity) {
    if (capacity <= capacity_) return;
    const size_t grown = capacity < 2 * capacity_ ? 2 * capacity_ : capacity;
    auto* heap = new int64_t[grown];
    if (size_ > 0) std::memcpy(heap, data(), size_ * sizeof(int64_t));
    delete[] heap_;
    heap_ = heap;
    capacity_ = grown;
  }
  void Free() {
    delete[] heap_;
    heap_ = nullptr;
    capacity_ = kInline;
    size_ = 0;
  }
  void Steal(RequiredSteps& other) {
    size_ = other.size_;
    capacity_ = other.capacity_;
    heap_ = std::exchange(other.heap_, nullptr);
    if (heap_ == nullptr && size_ > 0) std::memcpy(inline_, other.inline_, size_ * sizeof(int64_t));
    other.size_ = 0;
    other.capacity_ = kInline;
  }

  int64_t* heap_ = nullptr;  // null while the steps fit in inline_
  size_t size_ = 0;
  size_t capacity_ = kInline;
  int64_t inline_[kInline] = {};
};

}  // namespace litmus
