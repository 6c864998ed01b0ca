// TrialSelection and SelectedTrial: parsing step ranges and resolving `litmus inspect`'s filters
// against a trial's catalog (names by regex and collection, steps by mode and range).
#include "litmus/engine/trial_selection.h"

#include "litmus/engine/trial_outline.h"

#include <algorithm>
#include <charconv>
#include <iterator>

namespace litmus {
namespace {

std::optional<int64_t> ParseStep(std::string_view text) {
  int64_t value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

std::string Quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::vector<std::string> SortedUnion(std::vector<std::string> a, const std::vector<std::string>& b) {
  std::vector<std::string> out;
  std::sort(a.begin(), a.end());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace

StatusOr<StepRange> ParseStepRange(std::string_view text) {
  const auto bad = [&] {
    return InvalidArgumentError("invalid step '" + std::string(text) +
                                "': expected N, A:B (A <= step < B), A: or :B, with non-negative integers");
  };
  StepRange range;
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    const auto step = ParseStep(text);
    if (!step) return bad();
    range.begin = *step;
    range.end = *step + 1;
    return range;
  }
  const std::string_view first = text.substr(0, colon), second = text.substr(colon + 1);
  if (first.empty() && second.empty()) return bad();
  if (!first.empty()) {
    const auto step = ParseStep(first);
    if (!step) return bad();
    range.begin = *step;
  }
  if (!second.empty()) {
    const auto step = ParseStep(second);
    if (!step) return bad();
    range.end = *step;
  }
  if (range.begin >= range.end) {
    return InvalidArgumentError("invalid step range '" + std::string(text) + "': it holds no step (end is exclusive)");
  }
  return range;
}

std::string StepRangeText(const StepRange& range) {
  const bool open_begin = range.begin == std::numeric_limits<int64_t>::min();
  const bool open_end = range.end == std::numeric_limits<int64_t>::max();
  if (!open_begin && !open_end && range.end == range.begin + 1) return std::to_string(range.begin);
  return (open_begin ? "" : std::to_string(range.begin)) + ":" + (open_end ? "" : std::to_string(range.end));
}

std::string TrialSelection::Describe() const {
  std::string out;
  const auto add = [&out](std::string_view flag, const std::string& value) {
    if (!out.empty()) out += ' ';
    out += flag;
    out += ' ';
    out += value;
  };
  for (const std::string& r : tensor_regex) add("--tensor", Quoted(r));
  for (const std::string& c : collections) add("--collection", c);
  if (mode) add("--mode", std::string(ModeName(*mode)));
  if (steps) add("--step", StepRangeText(*steps));
  return out;
}

template <typename T>
BasicSelectedTrial<T> BasicSelectedTrial<T>::All(const T& trial) {
  BasicSelectedTrial selected(trial, {});
  selected.names_ = trial.TensorNames();
  selected.steps_ = trial.Steps(Mode::kGlobal, /*include_incomplete=*/true);
  return selected;
}

template <typename T>
StatusOr<BasicSelectedTrial<T>> BasicSelectedTrial<T>::Resolve(const T& trial, TrialSelection selection) {
  BasicSelectedTrial selected(trial, std::move(selection));
  const TrialSelection& s = selected.selection_;

  std::vector<std::string> names = trial.TensorNames();  // sorted
  if (!s.tensor_regex.empty()) {
    std::vector<std::string> matching;
    for (const std::string& pattern : s.tensor_regex) {
      StatusOr<std::vector<std::string>> m = trial.TensorNamesMatching(pattern);
      if (!m.ok()) return InvalidArgumentError("--tensor: " + m.status().message());
      matching = SortedUnion(std::move(*m), matching);
    }
    names = std::move(matching);
  }
  if (!s.collections.empty()) {
    std::vector<std::string> members;
    for (const std::string& collection : s.collections) {
      StatusOr<std::vector<std::string>> m = trial.TensorNamesInCollection(collection);
      if (!m.ok()) {
        std::string known;
        for (const auto& [name, c] : trial.collections()) known += (known.empty() ? "" : ", ") + name;
        return NotFoundError("unknown collection '" + collection + "'; collections of this trial: " +
                             (known.empty() ? "none" : known));
      }
      members = SortedUnion(std::move(*m), members);
    }
    std::vector<std::string> both;
    std::set_intersection(names.begin(), names.end(), members.begin(), members.end(), std::back_inserter(both));
    names = std::move(both);
  }

  for (int64_t g : trial.Steps(Mode::kGlobal, /*include_incomplete=*/true)) {
    if (selected.IncludesStep(g)) selected.steps_.push_back(g);
  }
  if (s.FiltersSteps()) {
    std::erase_if(names, [&](const std::string& name) {
      return selected.FilterSteps(trial.TensorSteps(name, /*include_incomplete=*/true)).empty();
    });
  }
  selected.names_ = std::move(names);
  return selected;
}

template <typename T>
bool BasicSelectedTrial<T>::IncludesTensor(std::string_view name) const {
  return std::binary_search(names_.begin(), names_.end(), name,
                            [](std::string_view a, std::string_view b) { return a < b; });
}

template <typename T>
bool BasicSelectedTrial<T>::IncludesStep(int64_t global_step) const {
  const TrialSelection& s = selection_;
  if (!s.FiltersSteps()) return true;
  if (!s.mode || *s.mode == Mode::kGlobal) return s.steps->Contains(global_step);
  // A step of the catalog always has a mode (from its index files); GLOBAL when it has none.
  const auto mode = trial_->ModeOfGlobalStep(global_step);
  const Mode m = mode ? mode->first : Mode::kGlobal;
  if (m != *s.mode) return false;
  return !s.steps || s.steps->Contains(mode ? mode->second : global_step);
}

template <typename T>
std::vector<int64_t> BasicSelectedTrial<T>::FilterSteps(const std::vector<int64_t>& global_steps) const {
  if (!selection_.FiltersSteps()) return global_steps;
  std::vector<int64_t> out;
  std::set_intersection(global_steps.begin(), global_steps.end(), steps_.begin(), steps_.end(),
                        std::back_inserter(out));
  return out;
}

template class BasicSelectedTrial<Trial>;
template class BasicSelectedTrial<TrialOutline>;

}  // namespace litmus
