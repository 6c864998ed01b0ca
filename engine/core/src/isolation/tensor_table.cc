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

std::pair<int32_t, int64_t> WireMode(const Trial& trial, int64_t step) {
  const auto mode = trial.ModeOfGlobalStep(step);
  return mode ? std::pair(static_cast<int32_t>(mode->first), mode->second) : std::pair(LITMUS_MODE_GLOBAL, step);
}

TensorTable::Entry TensorTable::Build(const Trial& trial, std::string_view name, int64_t step) const {
  Entry entry;
  StatusOr<TensorPtr> value = trial.Value(name, step);
  if (!value.ok() || (*value)->is_string()) return entry;
  const Tensor& tensor = **value;
  uint64_t offset = 0;
  if (!tensor.bytes().empty() && !arena_->Contains(tensor.bytes().data(), tensor.bytes().size(), &offset)) {
    return entry;
  }
  Encoder out;
  out.Reserve(256);
  out.Put<int64_t>(step).Put<uint64_t>(offset).Put<uint64_t>(tensor.bytes().size());
  out.Put<int32_t>(static_cast<int32_t>(tensor.dtype())).PutVector(tensor.shape());
  out.Put<int64_t>(tensor.num_elements());
  const auto [mode, mode_step] = WireMode(trial, step);
  out.Put<int32_t>(mode).Put<int64_t>(mode_step);
  std::array<double, kMemoKeys> memos;
  uint32_t mask = UsableMemos(tensor, false, memos);
  if (mask != 0 && trial.HasStoredReductions(name, step)) mask = 0;
  out.Put<uint32_t>(mask);
  for (uint32_t key = 0; key < kMemoKeys; ++key) {
    if ((mask >> key & 1) != 0) out.Put<double>(memos[key]);
  }
  entry.value = *std::move(value);
  entry.bytes = out.Take();
  return entry;
}

bool TensorTable::Append(const Trial& trial, std::string_view name, int64_t step, int64_t invoked_step, Encoder& out,
                         TensorPtr* keep) {
  std::lock_guard<std::mutex> lock(mu_);
  if (invoked_step != invoked_step_) {
    entries_.clear();
    invoked_step_ = invoked_step;
  }
  const Key key{&trial, name.data(), step};
  auto it = entries_.find(key);
  if (it == entries_.end()) it = entries_.emplace(key, Build(trial, name, step)).first;
  if (!it->second.value) return false;
  out.PutRaw(it->second.bytes);
  *keep = it->second.value;
  return true;
}

}  // namespace litmus::isolation
