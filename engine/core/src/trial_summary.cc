// BuildTrialSummary: the default, human-readable output of `litmus inspect`, and CompactSteps.
#include "litmus/engine/trial_summary.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "litmus/engine/trial_document.h"
#include "litmus/engine/trial_outline.h"

namespace litmus {
namespace {


std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

// One arithmetic run of steps: first, first + stride, ..., last.
struct Run {
  int64_t first = 0, last = 0, stride = 1;
};

std::string RunText(const Run& run) {
  if (run.first == run.last) return std::to_string(run.first);
  std::string text = std::to_string(run.first) + "-" + std::to_string(run.last);
  if (run.stride != 1) text += " every " + std::to_string(run.stride);
  return text;
}

// Greedy: each run extends as long as the stride stays the same. A run of two steps is kept
// only when they are consecutive ("4-5"); otherwise the first is a single and the second starts
// the next run ("3, 7-15 every 4" rather than "3-7 every 4, 11-15 every 4").
std::vector<Run> Runs(const std::vector<int64_t>& steps) {
  std::vector<Run> runs;
  size_t i = 0;
  while (i < steps.size()) {
    Run run{steps[i], steps[i], 1};
    if (i + 1 < steps.size()) {
      const int64_t stride = steps[i + 1] - steps[i];
      size_t j = i + 1;
      while (j + 1 < steps.size() && steps[j + 1] - steps[j] == stride) ++j;
      if (j > i + 1 || stride == 1) {
        run = {steps[i], steps[j], stride};
        i = j;
      }
    }
    runs.push_back(run);
    ++i;
  }
  return runs;
}

}  // namespace

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::string CompactSteps(const std::vector<int64_t>& steps, size_t max_runs) {
  if (steps.empty()) return "none";
  const std::vector<Run> runs = Runs(steps);
  std::string out;
  const auto add = [&out](const std::string& text) {
    if (!out.empty()) out += ", ";
    out += text;
  };
  if (runs.size() <= std::max<size_t>(max_runs, 3)) {
    for (const Run& run : runs) add(RunText(run));
    return out;
  }
  const size_t head = std::max<size_t>(max_runs, 3) - 2;
  for (size_t i = 0; i < head; ++i) add(RunText(runs[i]));
  add("...");
  add(RunText(runs.back()));
  return out + " (" + std::to_string(runs.size()) + " ranges)";
}

namespace {

// Complete mode steps of `mode` and the global step of each (Trial::GlobalStep of each).
std::pair<std::vector<int64_t>, std::vector<int64_t>> CompleteModeSteps(const Trial& trial, Mode mode) {
  std::pair<std::vector<int64_t>, std::vector<int64_t>> out;
  out.first = trial.Steps(mode);
  for (int64_t s : out.first) {
    if (auto g = mode == Mode::kGlobal ? std::optional<int64_t>(s) : trial.GlobalStep(mode, s)) out.second.push_back(*g);
  }
  return out;
}
// The same from an outline's owners in one pass (its GlobalStep costs O(steps) a call).
std::pair<std::vector<int64_t>, std::vector<int64_t>> CompleteModeSteps(const TrialOutline& outline, Mode mode) {
  std::pair<std::vector<int64_t>, std::vector<int64_t>> out;
  for (const auto& [mode_step, g] : outline.ModeStepOwners(mode)) {
    if (!outline.IsStepComplete(g)) continue;
    out.first.push_back(mode_step);
    out.second.push_back(g);
  }
  return out;
}

template <typename T, typename Look>
std::string Summary(const BasicSelectedTrial<T>& selected, Look&& look) {
  const T& trial = selected.trial();
  std::ostringstream out;
  out << "trial: " << trial.root() << "\n";
  if (!trial.collections_ready()) {
    out << "status: no collections file yet (training has not finished its first step)\n";
  }
  out << "status: "
      << (trial.loaded_all_steps() ? "training ended (end marker present)" : "in progress (no end marker)")
      << "\n";
  const std::vector<std::string> workers = trial.workers();
  out << "workers: " << workers.size() << " (" << Join(workers, ", ") << "), num_workers "
      << trial.num_workers() << "\n";

  const std::vector<int64_t> complete = trial.Steps();
  const std::vector<int64_t> all = trial.Steps(Mode::kGlobal, true);
  std::vector<int64_t> incomplete;
  std::set_difference(all.begin(), all.end(), complete.begin(), complete.end(),
                      std::back_inserter(incomplete));
  out << "steps: " << complete.size() << " complete (" << CompactSteps(complete) << "), last complete step "
      << trial.last_complete_step() << "; incomplete: " << CompactSteps(incomplete) << "\n";
  constexpr size_t kListedIncomplete = 5;
  for (size_t i = 0; i < incomplete.size() && i < kListedIncomplete; ++i) {
    out << "  step " << incomplete[i] << " written by " << Join(trial.WorkersForStep(incomplete[i]), ", ")
        << " only\n";
  }
  if (incomplete.size() > kListedIncomplete) {
    out << "  ... and " << incomplete.size() - kListedIncomplete << " more incomplete steps\n";
  }

  out << "modes:\n";
  for (Mode mode : {Mode::kTrain, Mode::kEval, Mode::kPredict, Mode::kGlobal}) {
    if (mode != Mode::kGlobal && !trial.HasMode(mode)) continue;
    auto [mode_steps, global] = CompleteModeSteps(trial, mode);
    if (mode == Mode::kGlobal) {
      // Steps saved in GLOBAL mode itself (FileWriter without a hook); rarely any.
      std::vector<int64_t> own;
      for (int64_t g : complete) {
        auto m = trial.ModeOfGlobalStep(g);
        if (m && m->first == Mode::kGlobal) own.push_back(g);
      }
      if (own.empty()) continue;
      global = own;
    }
    out << "  " << ModeName(mode) << ": " << global.size() << " steps, mode steps "
        << CompactSteps(mode == Mode::kGlobal ? global : mode_steps) << " -> global steps " << CompactSteps(global) << "\n";
  }

  // Collections per tensor.
  std::map<std::string, std::vector<std::string>> collections_of;
  out << "collections:";
  for (const auto& [name, collection] : trial.collections()) {
    auto members = trial.TensorNamesInCollection(name);
    const size_t count = members.ok() ? members->size() : 0;
    out << " " << name << "(" << count << ")";
    if (members.ok()) {
      for (const auto& m : *members) collections_of[m].push_back(name);
    }
  }
  out << "\n";

  const std::vector<std::string>& names = selected.tensor_names();
  if (selected.selection().SelectsEverything()) {
    out << "tensors: " << names.size() << "\n";
  } else {
    out << "selection: " << selected.selection().Describe() << "\n";
    out << "tensors: " << names.size() << " of " << trial.TensorNames().size() << " selected; steps selected: "
        << selected.steps().size() << " (" << CompactSteps(selected.steps()) << ")\n";
    if (names.empty()) return out.str();
  }
  size_t width = 4;
  for (const auto& n : names) width = std::max(width, n.size());
  out << "  " << std::string("NAME") << std::string(width - 4 + 2, ' ') << "DTYPE       SHAPE           STEPS  COLLECTIONS\n";
  for (const auto& name : names) {
    const std::vector<int64_t> steps = selected.FilterSteps(trial.TensorSteps(name, true));
    TensorLook seen;
    if (!steps.empty()) seen = look(name, steps.back());
    const std::string& dtype = seen.dtype;
    const std::string& shape = seen.shape;
    std::string line = "  " + name + std::string(width - name.size() + 2, ' ');
    line += dtype + std::string(dtype.size() < 12 ? 12 - dtype.size() : 1, ' ');
    line += shape + std::string(shape.size() < 16 ? 16 - shape.size() : 1, ' ');
    std::string count = std::to_string(steps.size());
    line += count + std::string(count.size() < 7 ? 7 - count.size() : 1, ' ');
    line += Join(collections_of[name], ",");
    out << line << "\n";
  }
  return out.str();
}

}  // namespace

TensorLook LookAtTensor(const Trial& trial, const std::string& name, int64_t step) {
  TensorLook out;
  auto value = trial.Value(name, step);
  trial.Release({{name, step}});  // (the TensorPtr keeps it alive for this line)
  if (value.ok()) {
    const Tensor& t = **value;
    out.dtype = t.is_string() ? "str" : std::string(DTypeName(t.dtype()));
    out.shape = ShapeText(t.shape());
  } else {
    out.dtype = ErrorClassName(value.status());
    out.dtype.insert(out.dtype.begin(), '<');  // ("<" + name + ">" trips GCC 12's -Wrestrict here)
    out.dtype.push_back('>');
    auto s = trial.Shape(name, step);
    if (s.ok()) out.shape = ShapeText(*s);
  }
  return out;
}

std::string BuildTrialSummary(const SelectedTrial& selected) {
  return Summary(selected, [&](const std::string& name, int64_t step) {
    return LookAtTensor(selected.trial(), name, step);
  });
}

std::string BuildTrialSummary(const SelectedOutline& selected, const std::map<std::string, TensorLook>& looks) {
  return Summary(selected, [&](const std::string& name, int64_t) {
    const auto it = looks.find(name);
    return it == looks.end() ? TensorLook{} : it->second;
  });
}

}  // namespace litmus
