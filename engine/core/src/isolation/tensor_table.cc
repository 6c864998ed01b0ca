// TensorTable: building and sharing the Invoke entries of required tensors. Thread-safe.
#include "isolation/tensor_table.h"

#include "litmus/rule_abi.h"

namespace litmus::isolation {

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
  if (const auto mode = trial.ModeOfGlobalStep(step)) {
    out.Put<int32_t>(static_cast<int32_t>(mode->first)).Put<int64_t>(mode->second);
  } else {
    out.Put<int32_t>(LITMUS_MODE_GLOBAL).Put<int64_t>(step);
  }
  // Reductions the runner computed already (key 2 * LITMUS_REDUCTION_* + abs, the trial's memo
  // keys), unless a stored reduction could take precedence (Trial::Reduction prefers those).
  uint32_t mask = 0;
  double memos[18];
  tensor.ForEachMemo([&](uint32_t key, double value) {
    if (key >= 18) return;
    mask |= uint32_t{1} << key;
    memos[key] = value;
  });
  if (mask != 0 && trial.HasStoredReductions(name, step)) mask = 0;
  out.Put<uint32_t>(mask);
  for (uint32_t key = 0; key < 18; ++key) {
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
