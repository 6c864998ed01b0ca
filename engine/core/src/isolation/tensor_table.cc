// TensorTable: building and sharing the Invoke entries of required tensors. Thread-safe.
#include "isolation/tensor_table.h"

#include "litmus/rule_abi.h"

namespace litmus::isolation {

uint32_t UsableMemos(const Tensor& tensor, bool stored_reductions, std::array<double, kMemoKeys>& memos) {
  if (stored_reductions) return 0;
  uint32_t mask = 0;
  tensor.ForEachMemo([&](uint32_t key, double value) {
    if (key >= kMemoKeys) return;
    mask |= uint32_t{1} << key;
    memos[key] = value;
  });
  return mask;
}

void TensorTable::AddUser() {
  std::lock_guard<std::mutex> lock(mu_);
  ++users_;
}

TensorPtr TensorTable::Resolve(const Trial& trial, std::string_view name, int64_t step, const ReadValue* known,
                               std::optional<bool>* stored_reductions) const {
  if (known != nullptr && known->value != nullptr) {
    *stored_reductions = known->stored_reductions;
    return known->value;
  }
  StatusOr<TensorPtr> value = trial.Value(name, step);
  if (!value.ok()) return nullptr;
  return *std::move(value);
}

bool TensorTable::Encode(const Trial& trial, std::string_view name, int64_t step, const Tensor& tensor,
                         std::optional<bool> stored_reductions, Encoder& out) {
  if (tensor.is_string()) return false;
  uint64_t offset = 0;
  if (!tensor.bytes().empty() && !arena_->Contains(tensor.bytes().data(), tensor.bytes().size(), &offset)) {
    return false;
  }
  out.Put<int64_t>(step).Put<uint64_t>(offset).Put<uint64_t>(tensor.bytes().size());
  out.Put<int32_t>(static_cast<int32_t>(tensor.dtype())).PutVector(tensor.shape());
  out.Put<int64_t>(tensor.num_elements());
  if (mode_trial_ != &trial || mode_of_step_ != step) {
    const auto mode = trial.ModeOfGlobalStep(step);
    mode_ = mode ? std::pair(static_cast<int32_t>(mode->first), mode->second) : std::pair(LITMUS_MODE_GLOBAL, step);
    mode_trial_ = &trial;
    mode_of_step_ = step;
  }
  out.Put<int32_t>(mode_.first).Put<int64_t>(mode_.second);
  std::array<double, kMemoKeys> memos;
  uint32_t mask = UsableMemos(tensor, false, memos);
  if (mask != 0 && (stored_reductions ? *stored_reductions : trial.HasStoredReductions(name, step))) mask = 0;
  out.Put<uint32_t>(mask);
  for (uint32_t key = 0; key < kMemoKeys; ++key) {
    if ((mask >> key & 1) != 0) out.Put<double>(memos[key]);
  }
  return true;
}

bool TensorTable::Append(const Trial& trial, std::string_view name, int64_t step, int64_t invoked_step,
                         const ReadValue* known, Encoder& out, TensorPtr* keep) {
  std::lock_guard<std::mutex> lock(mu_);
  if (invoked_step != invoked_step_) {
    entries_.clear();
    bytes_.Clear();
    invoked_step_ = invoked_step;
    mode_trial_ = nullptr;
  }
  std::optional<bool> stored_reductions;
  if (users_ <= 1) {
    TensorPtr value = Resolve(trial, name, step, known, &stored_reductions);
    if (value == nullptr) return false;
    const size_t mark = out.bytes().size();
    if (!Encode(trial, name, step, *value, stored_reductions, out)) {
      out.Truncate(mark);
      return false;
    }
    *keep = std::move(value);
    return true;
  }
  const Key key{&trial, name.data(), step};
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    Entry entry;
    entry.value = Resolve(trial, name, step, known, &stored_reductions);
    entry.offset = bytes_.bytes().size();
    if (entry.value != nullptr && !Encode(trial, name, step, *entry.value, stored_reductions, bytes_)) {
      bytes_.Truncate(entry.offset);
      entry.value = nullptr;
    }
    entry.size = bytes_.bytes().size() - entry.offset;
    it = entries_.emplace(key, std::move(entry)).first;
  }
  if (!it->second.value) return false;
  out.PutRaw(std::string_view(bytes_.bytes()).substr(it->second.offset, it->second.size));
  *keep = it->second.value;
  return true;
}

}  // namespace litmus::isolation
