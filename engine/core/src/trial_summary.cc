// BuildTrialSummary: the default, human-readable output of `litmus inspect`.
#include "litmus/engine/trial_summary.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "litmus/engine/trial_document.h"

namespace litmus {
namespace {

// "0-5, 8-13, 20" for a sorted list of steps; "none" when empty.
std::string Ranges(const std::vector<int64_t>& steps) {
  if (steps.empty()) return "none";
  std::ostringstream out;
  size_t i = 0;
  while (i < steps.size()) {
    size_t j = i;
    while (j + 1 < steps.size() && steps[j + 1] == steps[j] + 1) ++j;
    if (i > 0) out << ", ";
    out << steps[i];
    if (j > i) out << "-" << steps[j];
    i = j + 1;
  }
  return out.str();
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

}  // namespace

std::string BuildTrialSummary(const Trial& trial) {
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
  out << "steps: " << complete.size() << " complete (" << Ranges(complete) << "), last complete step "
      << trial.last_complete_step() << "; incomplete: " << Ranges(incomplete) << "\n";
  for (int64_t step : incomplete) {
    out << "  step " << step << " written by " << Join(trial.WorkersForStep(step), ", ") << " only\n";
  }

  out << "modes:\n";
  for (Mode mode : {Mode::kTrain, Mode::kEval, Mode::kPredict, Mode::kGlobal}) {
    if (mode != Mode::kGlobal && !trial.HasMode(mode)) continue;
    const std::vector<int64_t> mode_steps = trial.Steps(mode);
    std::vector<int64_t> global;
    for (int64_t s : mode_steps) {
      if (auto g = mode == Mode::kGlobal ? std::optional<int64_t>(s) : trial.GlobalStep(mode, s)) {
        global.push_back(*g);
      }
    }
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
        << Ranges(mode == Mode::kGlobal ? global : mode_steps) << " -> global steps " << Ranges(global) << "\n";
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

  const std::vector<std::string> names = trial.TensorNames();
  out << "tensors: " << names.size() << "\n";
  size_t width = 4;
  for (const auto& n : names) width = std::max(width, n.size());
  out << "  " << std::string("NAME") << std::string(width - 4 + 2, ' ') << "DTYPE       SHAPE           STEPS  COLLECTIONS\n";
  for (const auto& name : names) {
    const std::vector<int64_t> steps = trial.TensorSteps(name, true);
    std::string dtype = "?", shape = "?";
    if (!steps.empty()) {
      auto value = trial.Value(name, steps.back());
      if (value.ok()) {
        const Tensor& t = **value;
        dtype = t.is_string() ? "str" : std::string(DTypeName(t.dtype()));
        shape = ShapeText(t.shape());
      } else {
        dtype = "<" + ErrorClassName(value.status()) + ">";
        auto s = trial.Shape(name, steps.back());
        if (s.ok()) shape = ShapeText(*s);
      }
    }
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

}  // namespace litmus
