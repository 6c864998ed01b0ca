// litmus._core: the Python extension behind `import litmus` — smdebug's trial API (create_trial,
// Trial, Tensor, Collection) over litmus::Trial (engine/core/include/litmus/engine/trial.h).
// Values are read-only numpy arrays viewing the decoded tensor's bytes (no copy; the array keeps
// the shared Tensor alive). Reads release the GIL. Errors become smdebug's exceptions
// (litmus/exceptions.py) from the TrialError subcodes.
// Thread-safety: a Trial may be used from several Python threads. Refresh() takes the trial's
// lock exclusively; catalog queries (GIL held) and reads (GIL released) take it shared, which is
// what litmus::Trial allows. Nobody waits for the GIL while holding the lock.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "litmus/aws/trial_env.h"
#include "litmus/engine/tensor.h"
#include "litmus/engine/trial.h"
#include "litmus/format/dtype.h"
#include "litmus/format/mode.h"
#include "litmus/format/trial_layout.h"

namespace py = pybind11;

namespace litmus::python {
namespace {

using Clock = std::chrono::steady_clock;

// Classes of litmus/exceptions.py and litmus/modes.py, looked up once at import.
struct PyClasses {
  py::object mode_keys, step_state;
  py::object tensor_unavailable, tensor_unavailable_for_step, invalid_worker, step_not_yet_available,
      step_unavailable, no_more_data, shape_unavailable_for_step, data_loss;
};
PyClasses* classes = nullptr;  // set at import; lives as long as the interpreter

Mode ToMode(const py::object& mode) {
  if (mode.is_none()) return Mode::kGlobal;
  py::object value = py::hasattr(mode, "value") ? mode.attr("value") : mode;
  if (py::isinstance<py::str>(value)) {
    if (auto m = ModeFromName(value.cast<std::string>())) return *m;
  } else if (auto m = ModeFromValue(value.cast<int64_t>())) {
    return *m;
  }
  throw py::value_error("unknown mode " + py::repr(mode).cast<std::string>() +
                        " (ModeKeys.TRAIN, EVAL, PREDICT or GLOBAL)");
}

py::object ModeObject(Mode mode) { return classes->mode_keys(static_cast<int>(mode)); }

std::optional<std::string> ToWorker(const py::object& worker) {
  if (worker.is_none()) return std::nullopt;
  return worker.cast<std::string>();
}

[[noreturn]] void Raise(const py::object& cls, const py::object& instance) {
  PyErr_SetObject(cls.ptr(), instance.ptr());
  throw py::error_already_set();
}

class PyTrial;

// Raises the Python exception for a failed read of `name` at (step, mode, worker).
[[noreturn]] void RaiseStatus(const PyTrial& t, const Status& status, std::string_view name, int64_t step, Mode mode,
                              const std::optional<std::string>& worker);

// One numpy array over a decoded tensor: a read-only view for numbers, a str array for strings.
py::array ToArray(const TensorPtr& tensor) {
  std::vector<py::ssize_t> shape(tensor->shape().begin(), tensor->shape().end());
  if (tensor->is_string()) {
    py::list items;
    for (const std::string& s : tensor->strings()) {
      items.append(py::reinterpret_steal<py::object>(
          PyUnicode_DecodeUTF8(s.data(), static_cast<py::ssize_t>(s.size()), "replace")));
    }
    py::module_ np = py::module_::import("numpy");
    return np.attr("array")(items, py::arg("dtype") = "str").attr("reshape")(py::tuple(py::cast(shape)));
  }
  const py::dtype dtype(std::string(DTypeName(tensor->dtype())));
  if (tensor->num_elements() == 0 || tensor->bytes().empty()) return py::array(dtype, shape);
  auto* holder = new TensorPtr(tensor);
  py::capsule base(holder, [](void* p) { delete static_cast<TensorPtr*>(p); });
  py::array array(dtype, shape, {}, tensor->bytes().data(), base);
  py::detail::array_proxy(array.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return array;
}

constexpr size_t kPythonCacheBytes = size_t{64} << 20;

// A trial opened from a local folder or an s3:// prefix.
class PyTrial : public std::enable_shared_from_this<PyTrial> {
 public:
  PyTrial(std::string path, std::optional<std::pair<int64_t, int64_t>> range_steps, double refresh_interval_s)
      : path_(aws::NormalizeTrialPath(std::move(path))), refresh_interval_s_(refresh_interval_s) {
    TrialOptions options = TrialOptions::FromEnvironment();
    // Notebooks read one tensor at every step, then the next: each event file is visited once
    // per tensor, which mapped files serve without reopening them (Trial::CopyValues).
    options.map_event_files = true;
    // Decoded values kept for value() calls that come back: a small budget. Every value()
    // returns an array that keeps its own value alive, and a value not kept is decoded again
    // from its mapped file in microseconds; a large cache only makes each new value land in
    // fresh memory, which costs a page fault per 4 KiB page on virtual machines (reading every
    // tensor of 2000 steps x 200 tensors of 4 KiB with value() in a loop, same machine,
    // alternating: 3.54-3.87 s with 512 MiB, 2.76-2.97 s with 64 MiB).
    options.cache_bytes = kPythonCacheBytes;
    if (range_steps) {
      options.range_begin = range_steps->first;
      options.range_end = range_steps->second;
    }
    env_ = std::make_unique<aws::TrialEnv>();
    env_->AddTrial(path_);
    StatusOr<std::unique_ptr<Trial>> opened = [&] {
      py::gil_scoped_release nogil;
      return Trial::Open(env_.get(), path_, options);
    }();
    if (!opened.ok()) RaiseStatus(*this, opened.status(), "", 0, Mode::kGlobal, std::nullopt);
    trial_ = std::move(opened).value();
    last_refresh_ = Clock::now();
  }

  const Trial& trial() const { return *trial_; }
  const std::string& path() const { return path_; }
  std::shared_mutex& mu() const { return mu_; }

  // smdebug's maybe_refresh: nearly every call refreshes until all steps are loaded; litmus at
  // most once per refresh_interval_s (a listing costs an S3 request).
  void MaybeRefresh() {
    if (trial_->loaded_all_steps()) return;
    if (Clock::now() - last_refresh_ < std::chrono::duration<double>(refresh_interval_s_)) return;
    Refresh();
  }
  void Refresh() {
    Status status;
    {
      py::gil_scoped_release nogil;
      std::unique_lock lock(mu_);
      status = trial_->Refresh();
    }
    last_refresh_ = Clock::now();
    if (!status.ok()) RaiseStatus(*this, status, "", 0, Mode::kGlobal, std::nullopt);
  }

  // Reads with the GIL released; raises smdebug's exception on failure.
  TensorPtr Value(const std::string& name, int64_t step, Mode mode, const std::optional<std::string>& worker) {
    MaybeRefresh();
    StatusOr<TensorPtr> value = [&] {
      py::gil_scoped_release nogil;
      std::shared_lock lock(mu_);
      return trial_->Value(name, step, mode, worker);
    }();
    if (!value.ok()) RaiseStatus(*this, value.status(), name, step, mode, worker);
    return *value;
  }

  // Global step of (step, mode) as tensor.value resolves it (nullopt if unknown).
  std::optional<int64_t> GlobalOf(int64_t step, Mode mode) const {
    if (mode == Mode::kGlobal) return step;
    return trial_->GlobalStep(mode, step);
  }

  // The values of `name` at many steps, read in parallel (Trial::Prefetch) with the GIL released.
  std::vector<TensorPtr> Values(const std::string& name, const std::vector<int64_t>& steps, Mode mode,
                                const std::optional<std::string>& worker) {
    MaybeRefresh();
    std::vector<StatusOr<TensorPtr>> results;
    {
      py::gil_scoped_release nogil;
      std::shared_lock lock(mu_);
      if (!worker) {
        std::vector<Trial::StepTensor> keys;
        keys.reserve(steps.size());
        for (int64_t s : steps) {
          if (auto g = GlobalOf(s, mode)) keys.emplace_back(name, *g);
        }
        trial_->Prefetch(keys);
      }
      results.reserve(steps.size());
      for (int64_t s : steps) results.push_back(trial_->Value(name, s, mode, worker));
    }
    std::vector<TensorPtr> out;
    out.reserve(steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      if (!results[i].ok()) RaiseStatus(*this, results[i].status(), name, steps[i], mode, worker);
      out.push_back(*results[i]);
    }
    return out;
  }

  double Reduction(const std::string& name, int64_t step, const std::string& reduction, bool abs, Mode mode,
                   const std::optional<std::string>& worker) {
    const auto r = layout::ReductionFromName(reduction);
    if (!r) {
      throw py::value_error("unknown reduction '" + reduction +
                            "' (min, max, mean, std, variance, sum, prod, l1, l2)");
    }
    MaybeRefresh();
    StatusOr<double> value = [&] {
      py::gil_scoped_release nogil;
      std::shared_lock lock(mu_);
      return trial_->Reduction(name, step, *r, abs, mode, worker);
    }();
    if (!value.ok()) RaiseStatus(*this, value.status(), name, step, mode, worker);
    return *value;
  }

  std::vector<int64_t> Shape(const std::string& name, int64_t step, Mode mode, const std::optional<std::string>& worker) {
    MaybeRefresh();
    StatusOr<std::vector<int64_t>> shape = [&] {
      py::gil_scoped_release nogil;
      std::shared_lock lock(mu_);
      return trial_->Shape(name, step, mode, worker);
    }();
    if (!shape.ok()) {
      const auto error = GetTrialError(shape.status());
      if (error == TrialError::kTensorUnavailableForStep) {
        Raise(classes->shape_unavailable_for_step,
              classes->shape_unavailable_for_step(name, step, ModeObject(mode)));
      }
      RaiseStatus(*this, shape.status(), name, step, mode, worker);
    }
    return *shape;
  }

  // smdebug's wait_for_steps: polls until every step is available; StepUnavailable / NoMoreData
  // for a step that will never come.
  void WaitForSteps(const std::vector<int64_t>& steps, Mode mode, double poll_interval_s) {
    for (int64_t step : steps) {
      while (true) {
        MaybeRefresh();
        StepState state;
        {
          std::shared_lock lock(mu_);
          state = trial_->StepAvailability(step, mode);
        }
        if (state == StepState::kAvailable) break;
        if (state == StepState::kUnavailable) {
          Raise(classes->step_unavailable, classes->step_unavailable(step, ModeObject(mode)));
        }
        if (state == StepState::kNoMoreData) RaiseNoMoreData(step, mode);
        {
          py::gil_scoped_release nogil;
          std::this_thread::sleep_for(std::chrono::duration<double>(poll_interval_s));
        }
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        Refresh();
      }
    }
  }

  [[noreturn]] void RaiseNoMoreData(int64_t step, Mode mode) const {
    std::vector<int64_t> known;
    {
      std::shared_lock lock(mu_);
      known = trial_->Steps(mode, /*include_incomplete=*/true);
    }
    const int64_t last = known.empty() ? -1 : known.back();
    Raise(classes->no_more_data, classes->no_more_data(step, ModeObject(mode), last));
  }

 private:
  std::string path_;
  double refresh_interval_s_;
  std::unique_ptr<aws::TrialEnv> env_;  // declared before trial_: the trial reads through it
  std::unique_ptr<Trial> trial_;
  mutable std::shared_mutex mu_;
  Clock::time_point last_refresh_;
};

void RaiseStatus(const PyTrial& t, const Status& status, std::string_view name, int64_t step, Mode mode,
                 const std::optional<std::string>& worker) {
  const std::string tensor(name);
  if (const auto error = GetTrialError(status)) {
    switch (*error) {
      case TrialError::kTensorUnavailable:
        Raise(classes->tensor_unavailable, classes->tensor_unavailable(tensor));
      case TrialError::kTensorUnavailableForStep: {
        bool has_reductions = false;
        {
          std::shared_lock lock(t.mu());
          if (auto g = t.GlobalOf(step, mode)) {
            for (const TensorEntry& e : t.trial().Entries(tensor, *g)) {
              has_reductions |= !e.stored_reductions.empty() && (!worker || e.worker == *worker);
            }
          }
        }
        Raise(classes->tensor_unavailable_for_step,
              classes->tensor_unavailable_for_step(tensor, step, ModeObject(mode), has_reductions));
      }
      case TrialError::kInvalidWorker:
        Raise(classes->invalid_worker, classes->invalid_worker(worker.value_or("")));
      case TrialError::kStepNotYetAvailable:
        Raise(classes->step_not_yet_available, classes->step_not_yet_available(step, ModeObject(mode)));
      case TrialError::kStepUnavailable:
        Raise(classes->step_unavailable, classes->step_unavailable(step, ModeObject(mode)));
      case TrialError::kNoMoreData:
        t.RaiseNoMoreData(step, mode);
    }
  }
  const std::string& message = status.message();
  switch (status.code()) {
    case StatusCode::kDataLoss: Raise(classes->data_loss, classes->data_loss(message));
    case StatusCode::kInvalidArgument: throw py::value_error(message);
    case StatusCode::kNotFound:
      PyErr_SetString(PyExc_FileNotFoundError, message.c_str());
      throw py::error_already_set();
    case StatusCode::kUnimplemented:
      PyErr_SetString(PyExc_NotImplementedError, message.c_str());
      throw py::error_already_set();
    default:
      PyErr_SetString(PyExc_OSError, (std::string(StatusCodeName(status.code())) + ": " + message).c_str());
      throw py::error_already_set();
  }
}

// smdebug's Tensor: a name within a trial (holds the trial alive).
struct PyTensor {
  std::shared_ptr<PyTrial> trial;
  std::string name;
};

// smdebug's Collection, as the trial's collections files describe it.
struct PyCollection {
  std::string name;
  std::vector<std::string> tensor_names;   // as listed in the file
  std::vector<std::string> include_regex;
  py::object reduction_config;             // dict or None
};

py::object ReductionConfigObject(const Collection& c) {
  if (!c.reduction_config) return py::none();
  py::dict d;
  d["save_raw_tensor"] = c.reduction_config->save_raw_tensor;
  d["reductions"] = c.reduction_config->reductions;
  d["save_shape"] = c.reduction_config->save_shape;
  return d;
}

std::vector<std::string> Intersect(const std::vector<std::string>& a, std::vector<std::string> b) {
  std::sort(b.begin(), b.end());
  std::vector<std::string> out;
  for (const auto& x : a) {
    if (std::binary_search(b.begin(), b.end(), x)) out.push_back(x);
  }
  return out;
}

// One stacked array of equally shaped values (copied once into a fresh array).
py::array Stack(const std::string& name, const std::vector<int64_t>& steps, const std::vector<TensorPtr>& values) {
  if (values.empty()) return py::array(py::dtype("float32"), std::vector<py::ssize_t>{0});
  const TensorPtr& first = values.front();
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i]->dtype() != first->dtype() || values[i]->shape() != first->shape() || values[i]->is_string()) {
      if (values[i]->is_string() || first->is_string()) {
        throw py::type_error("tensor " + name + ": values(steps) stacks numbers only; string tensors: value(step)");
      }
      throw py::value_error("tensor " + name + ": values(steps) needs one dtype and shape; step " +
                            std::to_string(steps[i]) + " differs from step " + std::to_string(steps.front()));
    }
  }
  std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(values.size())};
  shape.insert(shape.end(), first->shape().begin(), first->shape().end());
  py::array out(py::dtype(std::string(DTypeName(first->dtype()))), shape);
  auto* dst = static_cast<std::byte*>(out.mutable_data());
  const size_t each = first->bytes().size();
  {
    py::gil_scoped_release nogil;
    for (size_t i = 0; i < values.size(); ++i) {
      if (each != 0) std::memcpy(dst + i * each, values[i]->bytes().data(), each);
    }
  }
  return out;
}

// values(steps) of the default worker: the first value gives the dtype and shape, then every
// step is copied straight into the array (Trial::CopyValues, GIL released). Any step that does
// not copy takes the value-by-value path, which raises what it always raised.
py::array StackValues(PyTrial& t, const std::string& name, const std::vector<int64_t>& steps, Mode mode,
                      const std::optional<std::string>& worker) {
  if (steps.empty() || worker) return Stack(name, steps, t.Values(name, steps, mode, worker));
  const TensorPtr first = t.Value(name, steps.front(), mode, worker);
  if (first->is_string()) return Stack(name, steps, t.Values(name, steps, mode, worker));
  std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(steps.size())};
  shape.insert(shape.end(), first->shape().begin(), first->shape().end());
  py::array out(py::dtype(std::string(DTypeName(first->dtype()))), shape);
  const std::span<std::byte> bytes(static_cast<std::byte*>(out.mutable_data()), first->bytes().size() * steps.size());
  std::vector<Status> statuses;
  {
    py::gil_scoped_release nogil;
    std::shared_lock lock(t.mu());
    statuses = t.trial().CopyValues(name, steps, mode, first->dtype(), first->shape(), bytes);
  }
  for (const Status& s : statuses) {
    if (!s.ok()) return Stack(name, steps, t.Values(name, steps, mode, worker));
  }
  return out;
}

// Trial.values(names, steps): {name: stacked array} read file-major (Trial::CopyValuesFileMajor,
// GIL released): every event file once for all the tensors. Each tensor's first value gives its
// dtype and shape; a string tensor, and any tensor with a step that does not copy, takes
// Tensor.values(steps)'s path, which raises what value() raises.
py::dict TrialValues(PyTrial& t, const std::vector<std::string>& names,
                     const std::optional<std::vector<int64_t>>& shared_steps, Mode mode) {
  t.MaybeRefresh();
  std::vector<std::vector<int64_t>> steps(names.size());
  std::optional<size_t> unknown;
  {
    std::shared_lock lock(t.mu());
    for (size_t k = 0; k < names.size() && !unknown; ++k) {
      if (!t.trial().HasTensor(names[k])) unknown = k;
      steps[k] = shared_steps ? *shared_steps : t.trial().TensorSteps(names[k], mode);
    }
  }
  if (unknown) Raise(classes->tensor_unavailable, classes->tensor_unavailable(names[*unknown]));
  py::dict out;
  std::vector<Trial::ValuesTarget> targets;
  std::vector<size_t> target_name;  // targets[j] is names[target_name[j]]
  std::vector<py::array> arrays;
  for (size_t k = 0; k < names.size(); ++k) {
    if (steps[k].empty()) {
      out[py::str(names[k])] = StackValues(t, names[k], steps[k], mode, std::nullopt);
      continue;
    }
    const TensorPtr first = t.Value(names[k], steps[k].front(), mode, std::nullopt);
    if (first->is_string()) {
      out[py::str(names[k])] = StackValues(t, names[k], steps[k], mode, std::nullopt);
      continue;
    }
    std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(steps[k].size())};
    shape.insert(shape.end(), first->shape().begin(), first->shape().end());
    py::array array(py::dtype(std::string(DTypeName(first->dtype()))), shape);
    targets.push_back({names[k], steps[k], first->dtype(), first->shape(),
                       std::span<std::byte>(static_cast<std::byte*>(array.mutable_data()),
                                            first->bytes().size() * steps[k].size())});
    target_name.push_back(k);
    arrays.push_back(std::move(array));
  }
  std::vector<std::vector<Status>> statuses;
  {
    py::gil_scoped_release nogil;
    std::shared_lock lock(t.mu());
    statuses = t.trial().CopyValuesFileMajor(targets, mode);
  }
  for (size_t j = 0; j < targets.size(); ++j) {
    const std::string& name = names[target_name[j]];
    const bool ok = std::all_of(statuses[j].begin(), statuses[j].end(), [](const Status& s) { return s.ok(); });
    out[py::str(name)] = ok ? arrays[j] : Stack(name, steps[target_name[j]], t.Values(name, steps[target_name[j]], mode, std::nullopt));
  }
  return out;
}

std::string TrialRepr(const PyTrial& t) { return "<litmus.Trial '" + t.path() + "'>"; }

}  // namespace
}  // namespace litmus::python

using namespace litmus;          // NOLINT: the module body below reads like the API it binds
using namespace litmus::python;  // NOLINT

PYBIND11_MODULE(_core, m) {
  m.doc() = "litmus's C++ trial reader (import litmus, not this module)";
  py::module_ exceptions = py::module_::import("litmus.exceptions");
  py::module_ modes = py::module_::import("litmus.modes");
  classes = new PyClasses{
      modes.attr("ModeKeys"),
      modes.attr("StepState"),
      exceptions.attr("TensorUnavailable"),
      exceptions.attr("TensorUnavailableForStep"),
      exceptions.attr("InvalidWorker"),
      exceptions.attr("StepNotYetAvailable"),
      exceptions.attr("StepUnavailable"),
      exceptions.attr("NoMoreData"),
      exceptions.attr("ShapeUnavailableForStep"),
      exceptions.attr("DataLoss"),
  };
  m.attr("__version__") = LITMUS_VERSION;

  py::class_<PyCollection>(m, "Collection", "A collection as the trial's collections files describe it")
      .def_readonly("name", &PyCollection::name)
      .def_readonly("tensor_names", &PyCollection::tensor_names, "names listed in the file")
      .def_readonly("include_regex", &PyCollection::include_regex)
      .def_readonly("reduction_config", &PyCollection::reduction_config)
      .def("__repr__", [](const PyCollection& c) { return "<litmus.Collection '" + c.name + "'>"; });

  py::class_<PyTensor>(m, "Tensor", "One tensor of a trial (smdebug's Tensor)")
      .def_readonly("name", &PyTensor::name)
      .def(
          "value",
          [](const PyTensor& t, int64_t step_num, const py::object& mode, const py::object& worker) {
            return ToArray(t.trial->Value(t.name, step_num, ToMode(mode), ToWorker(worker)));
          },
          py::arg("step_num"), py::arg("mode") = py::none(), py::arg("worker") = py::none(),
          "The value at a step (a global step, or a mode step of `mode`) as a read-only numpy array "
          "viewing the decoded data; strings as a str array. Default worker: the first by name.")
      .def(
          "values",
          [](const PyTensor& t, const py::object& steps, const py::object& mode, const py::object& worker) -> py::object {
            Mode m = Mode::kGlobal;
            py::object step_list = steps;
            // smdebug's values(mode) (a dict of every step) when the first argument is a mode.
            if (!steps.is_none() && (py::isinstance(steps, classes->mode_keys) || py::hasattr(steps, "name"))) {
              m = ToMode(steps);
              step_list = py::none();
            } else {
              m = ToMode(mode);
            }
            if (step_list.is_none()) {
              std::vector<int64_t> all;
              {
                t.trial->MaybeRefresh();
                std::shared_lock lock(t.trial->mu());
                all = t.trial->trial().TensorSteps(t.name, m);
              }
              const auto values = t.trial->Values(t.name, all, m, ToWorker(worker));
              py::dict out;
              for (size_t i = 0; i < all.size(); ++i) out[py::int_(all[i])] = ToArray(values[i]);
              return out;
            }
            const auto list = step_list.cast<std::vector<int64_t>>();
            return StackValues(*t.trial, t.name, list, m, ToWorker(worker));
          },
          py::arg("steps") = py::none(), py::arg("mode") = py::none(), py::arg("worker") = py::none(),
          "values(steps): one array of shape (len(steps), *shape) with the values at those steps, read "
          "in parallel. values() or values(mode): smdebug's dict {step: value} of every step.")
      .def(
          "reduction_value",
          [](const PyTensor& t, int64_t step_num, const std::string& reduction_name, const py::object& mode,
             const py::object& worker, bool abs) {
            return t.trial->Reduction(t.name, step_num, reduction_name, abs, ToMode(mode), ToWorker(worker));
          },
          py::arg("step_num"), py::arg("reduction_name"), py::arg("mode") = py::none(),
          py::arg("worker") = py::none(), py::arg("abs") = false,
          "A reduction (min, max, mean, std, variance, sum, prod, l1, l2) of the value, or of |value| "
          "with abs=True: the saved reduction if any, else computed (docs/compatibility.md).")
      .def(
          "reduction_values",
          [](const PyTensor& t, int64_t step_num, const py::object& mode, const py::object& worker) {
            const Mode m = ToMode(mode);
            const auto w = ToWorker(worker);
            t.trial->MaybeRefresh();
            std::vector<std::pair<layout::Reduction, bool>> keys;
            {
              std::shared_lock lock(t.trial->mu());
              const auto g = t.trial->GlobalOf(step_num, m);
              std::vector<TensorEntry> entries = g ? t.trial->trial().Entries(t.name, *g) : std::vector<TensorEntry>{};
              for (const TensorEntry& e : entries) {
                if (w && e.worker != *w) continue;
                for (const auto& [key, location] : e.stored_reductions) keys.push_back(key);
                break;
              }
            }
            py::dict out;
            for (const auto& [r, abs] : keys) {
              const std::string rname(layout::ReductionName(r));
              out[py::make_tuple(rname, abs)] = t.trial->Reduction(t.name, step_num, rname, abs, m, w);
            }
            return out;
          },
          py::arg("step_num"), py::arg("mode") = py::none(), py::arg("worker") = py::none(),
          "The saved reductions at a step: {(name, abs): value}.")
      .def(
          "shape",
          [](const PyTensor& t, int64_t step_num, const py::object& mode, const py::object& worker) {
            const auto shape = t.trial->Shape(t.name, step_num, ToMode(mode), ToWorker(worker));
            return py::tuple(py::cast(shape));
          },
          py::arg("step_num"), py::arg("mode") = py::none(), py::arg("worker") = py::none(),
          "The shape at a step (a saved shape if any, else the value's), as a tuple.")
      .def(
          "steps",
          [](const PyTensor& t, const py::object& mode, bool show_incomplete_steps) {
            t.trial->MaybeRefresh();
            std::shared_lock lock(t.trial->mu());
            return t.trial->trial().TensorSteps(t.name, ToMode(mode), show_incomplete_steps);
          },
          py::arg("mode") = py::none(), py::arg("show_incomplete_steps") = false,
          "Steps at which the tensor was saved: global steps, or mode steps of `mode`.")
      .def(
          "prev_steps",
          [](const PyTensor& t, int64_t step, int64_t n, const py::object& mode) {
            t.trial->MaybeRefresh();
            std::shared_lock lock(t.trial->mu());
            std::vector<int64_t> steps = t.trial->trial().TensorSteps(t.name, ToMode(mode));
            const auto end = std::lower_bound(steps.begin(), steps.end(), step);
            const auto begin = end - std::min<std::ptrdiff_t>(n, end - steps.begin());
            return std::vector<int64_t>(begin, end);
          },
          py::arg("step"), py::arg("n"), py::arg("mode") = py::none(),
          "The up to n steps before `step` at which the tensor was saved.")
      .def(
          "workers",
          [](const PyTensor& t, int64_t step_num, const py::object& mode) {
            t.trial->MaybeRefresh();
            std::shared_lock lock(t.trial->mu());
            std::vector<std::string> out;
            if (auto g = t.trial->GlobalOf(step_num, ToMode(mode))) {
              for (const TensorEntry& e : t.trial->trial().Entries(t.name, *g)) out.push_back(e.worker);
            }
            return out;
          },
          py::arg("step_num"), py::arg("mode") = py::none(), "Workers that saved the tensor at a step, sorted.")
      .def("__repr__", [](const PyTensor& t) { return "<litmus.Tensor '" + t.name + "'>"; });

  py::class_<PyTrial, std::shared_ptr<PyTrial>>(m, "Trial", "A trial (smdebug's Trial): create it with create_trial")
      .def_property_readonly("path", &PyTrial::path)
      .def_property_readonly("name",
                             [](const PyTrial& t) {
                               const auto slash = t.path().find_last_of('/');
                               return slash == std::string::npos ? t.path() : t.path().substr(slash + 1);
                             })
      .def(
          "steps",
          [](PyTrial& t, const py::object& mode, bool show_incomplete_steps) {
            t.MaybeRefresh();
            std::shared_lock lock(t.mu());
            return t.trial().Steps(ToMode(mode), show_incomplete_steps);
          },
          py::arg("mode") = py::none(), py::arg("show_incomplete_steps") = false,
          "Complete steps, sorted: global steps, or mode steps of `mode`.")
      .def(
          "modes",
          [](PyTrial& t) {
            t.MaybeRefresh();
            std::shared_lock lock(t.mu());
            py::list out;
            for (Mode mode : {Mode::kTrain, Mode::kEval, Mode::kPredict}) {
              if (t.trial().HasMode(mode)) out.append(ModeObject(mode));
            }
            return out;
          },
          "The modes the trial saved steps in.")
      .def(
          "mode",
          [](PyTrial& t, int64_t global_step) {
            t.MaybeRefresh();
            std::optional<std::pair<Mode, int64_t>> m;
            {
              std::shared_lock lock(t.mu());
              m = t.trial().ModeOfGlobalStep(global_step);
            }
            if (!m) Raise(classes->step_unavailable, classes->step_unavailable(global_step, ModeObject(Mode::kGlobal)));
            return ModeObject(m->first);
          },
          py::arg("global_step"), "The mode of a global step.")
      .def(
          "mode_step",
          [](PyTrial& t, int64_t global_step) {
            t.MaybeRefresh();
            std::optional<std::pair<Mode, int64_t>> m;
            {
              std::shared_lock lock(t.mu());
              m = t.trial().ModeOfGlobalStep(global_step);
            }
            if (!m) Raise(classes->step_unavailable, classes->step_unavailable(global_step, ModeObject(Mode::kGlobal)));
            return m->second;
          },
          py::arg("global_step"), "The mode step of a global step.")
      .def(
          "global_step",
          [](PyTrial& t, const py::object& mode, int64_t mode_step) {
            const Mode m = ToMode(mode);
            t.MaybeRefresh();
            std::optional<int64_t> g;
            {
              std::shared_lock lock(t.mu());
              g = m == Mode::kGlobal ? std::optional<int64_t>(mode_step) : t.trial().GlobalStep(m, mode_step);
            }
            if (!g) Raise(classes->step_unavailable, classes->step_unavailable(mode_step, ModeObject(m)));
            return *g;
          },
          py::arg("mode"), py::arg("mode_step"), "The global step of a mode step.")
      .def(
          "workers",
          [](PyTrial& t) {
            t.MaybeRefresh();
            std::shared_lock lock(t.mu());
            return t.trial().workers();
          },
          "Worker names, sorted.")
      .def_property_readonly("num_workers",
                             [](PyTrial& t) {
                               t.MaybeRefresh();
                               std::shared_lock lock(t.mu());
                               return t.trial().num_workers();
                             })
      .def(
          "tensor_names",
          [](PyTrial& t, const py::object& collection, const py::object& regex, const py::object& step,
             const py::object& mode, bool show_prefixed_tensors) {
            static_cast<void>(show_prefixed_tensors);
            t.MaybeRefresh();
            std::shared_lock lock(t.mu());
            const Trial& trial = t.trial();
            std::vector<std::string> names = trial.TensorNames();
            if (!mode.is_none()) {
              const Mode m = ToMode(mode);
              if (m != Mode::kGlobal && !trial.HasMode(m)) {
                // smdebug raises KeyError for a mode it never saw.
                throw py::key_error(std::string(ModeName(m)));
              }
              if (m != Mode::kGlobal) names = Intersect(names, trial.TensorNamesForMode(m));
            }
            if (!step.is_none()) {
              int64_t s = step.cast<int64_t>();
              if (!mode.is_none() && ToMode(mode) != Mode::kGlobal) {
                const auto g = trial.GlobalStep(ToMode(mode), s);
                if (!g) return std::vector<std::string>{};
                s = *g;
              }
              names = Intersect(names, trial.TensorNamesAtStep(s));
            }
            if (!collection.is_none()) {
              std::vector<std::string> selected;
              if (py::isinstance<py::str>(collection)) {
                auto members = trial.TensorNamesInCollection(collection.cast<std::string>());
                if (members.ok()) selected = *members;  // an unknown collection selects nothing
              } else {
                for (const py::handle c : collection) {
                  auto members = trial.TensorNamesInCollection(py::str(c).cast<std::string>());
                  if (members.ok()) selected.insert(selected.end(), members->begin(), members->end());
                }
              }
              names = Intersect(names, selected);
            }
            if (!regex.is_none()) {
              std::vector<std::string> selected;
              std::vector<std::string> patterns;
              if (py::isinstance<py::str>(regex)) {
                patterns.push_back(regex.cast<std::string>());
              } else {
                patterns = regex.cast<std::vector<std::string>>();
              }
              for (const std::string& p : patterns) {
                auto matching = trial.TensorNamesMatching(p);
                if (!matching.ok()) throw py::value_error(matching.status().message());
                selected.insert(selected.end(), matching->begin(), matching->end());
              }
              names = Intersect(names, selected);
            }
            return names;
          },
          py::arg("collection") = py::none(), py::arg("regex") = py::none(), py::arg("step") = py::none(),
          py::arg("mode") = py::none(), py::arg("show_prefixed_tensors") = false,
          "Names of the saved tensors, sorted, filtered by collection(s), regex(es) (re.search), step "
          "and mode. KeyError for a mode the trial never saved (as smdebug).")
      .def(
          "has_tensor",
          [](PyTrial& t, const std::string& name) {
            t.MaybeRefresh();
            std::shared_lock lock(t.mu());
            return t.trial().HasTensor(name);
          },
          py::arg("tname"))
      .def(
          "tensor",
          [](const std::shared_ptr<PyTrial>& t, const std::string& name) {
            t->MaybeRefresh();
            bool known;
            {
              std::shared_lock lock(t->mu());
              known = t->trial().HasTensor(name);
            }
            if (!known) Raise(classes->tensor_unavailable, classes->tensor_unavailable(name));
            return PyTensor{t, name};
          },
          py::arg("tname"), "A tensor handle; TensorUnavailable for a name never saved.")
      .def(
          "collections",
          [](PyTrial& t) {
            t.MaybeRefresh();
            std::shared_lock lock(t.mu());
            std::map<std::string, PyCollection> out;
            for (const auto& [name, c] : t.trial().collections()) {
              out.emplace(name, PyCollection{name, c.tensor_names, c.include_regex, ReductionConfigObject(c)});
            }
            return out;
          },
          "{name: Collection} from the collections files.")
      .def(
          "collection",
          [](PyTrial& t, const std::string& name) {
            t.MaybeRefresh();
            std::shared_lock lock(t.mu());
            const auto& all = t.trial().collections();
            const auto it = all.find(name);
            if (it == all.end()) throw py::key_error(name);
            return PyCollection{name, it->second.tensor_names, it->second.include_regex,
                                ReductionConfigObject(it->second)};
          },
          py::arg("name"))
      .def(
          "has_passed_step",
          [](PyTrial& t, int64_t step, const py::object& mode) {
            t.MaybeRefresh();
            StepState state;
            {
              std::shared_lock lock(t.mu());
              state = t.trial().StepAvailability(step, ToMode(mode));
            }
            switch (state) {
              case StepState::kAvailable: return classes->step_state(1);
              case StepState::kNotYetAvailable: return classes->step_state(2);
              case StepState::kUnavailable:
              case StepState::kNoMoreData: return classes->step_state(0);
            }
            return classes->step_state(0);
          },
          py::arg("step"), py::arg("mode") = py::none(),
          "StepState.AVAILABLE, NOT_YET_AVAILABLE or UNAVAILABLE (smdebug's has_passed_step).")
      .def(
          "wait_for_steps",
          [](PyTrial& t, const std::vector<int64_t>& steps, const py::object& mode, double poll_interval_s) {
            t.WaitForSteps(steps, ToMode(mode), poll_interval_s);
          },
          py::arg("required_steps"),
           py::arg("mode") = py::none(), py::arg("poll_interval_s") = 2.0,
           "Blocks until every step is available (polling, GIL released); StepUnavailable or NoMoreData "
           "for a step that will never come.")
      .def_property_readonly("last_complete_step",
                             [](PyTrial& t) {
                               t.MaybeRefresh();
                               std::shared_lock lock(t.mu());
                               return t.trial().last_complete_step();
                             })
      .def_property_readonly("loaded_all_steps",
                             [](PyTrial& t) {
                               t.MaybeRefresh();
                               std::shared_lock lock(t.mu());
                               return t.trial().loaded_all_steps();
                             })
      .def(
          "training_ended",
          [](PyTrial& t) {
            t.MaybeRefresh();
            std::shared_lock lock(t.mu());
            return t.trial().end_marker_seen();
          },
          "True once the end-of-training marker was seen.")
      .def("refresh", &PyTrial::Refresh, "Looks for new steps now (queries also do, at most once per refresh_interval_s).")
      .def(
          "to_dict",
          [](const std::shared_ptr<PyTrial>& t, const py::object& names_arg, const std::vector<std::string>& reductions,
             bool abs, const py::object& mode) {
            const Mode m = ToMode(mode);
            t->MaybeRefresh();
            std::vector<std::string> names;
            if (names_arg.is_none()) {
              std::shared_lock lock(t->mu());
              names = t->trial().TensorNames();
            } else if (py::isinstance<py::str>(names_arg)) {
              names = {names_arg.cast<std::string>()};
            } else {
              names = names_arg.cast<std::vector<std::string>>();
            }
            for (const std::string& r : reductions) {
              if (!layout::ReductionFromName(r)) {
                throw py::value_error("unknown reduction '" + r + "' (min, max, mean, std, variance, sum, prod, l1, l2)");
              }
            }
            py::dict out;
            for (const std::string& name : names) {
              std::vector<int64_t> steps;
              std::vector<std::vector<double>> columns(reductions.size());
              {
                py::gil_scoped_release nogil;
                std::shared_lock lock(t->mu());
                const Trial& trial = t->trial();
                steps = trial.TensorSteps(name, m);
                std::vector<Trial::StepTensor> keys;
                for (int64_t s : steps) {
                  if (auto g = t->GlobalOf(s, m)) keys.emplace_back(name, *g);
                }
                trial.Prefetch(keys);
                for (size_t j = 0; j < reductions.size(); ++j) {
                  const auto r = *layout::ReductionFromName(reductions[j]);
                  for (int64_t s : steps) {
                    const auto value = trial.Reduction(name, s, r, abs, m);
                    columns[j].push_back(value.ok() ? *value : std::numeric_limits<double>::quiet_NaN());
                  }
                }
                trial.Release(keys);
              }
              py::dict entry;
              entry["steps"] = steps;
              for (size_t j = 0; j < reductions.size(); ++j) {
                entry[py::str((abs ? "abs_" : "") + reductions[j])] = columns[j];
              }
              out[py::str(name)] = entry;
            }
            return out;
          },
          py::arg("names") = py::none(),
          py::arg("reductions") = std::vector<std::string>{"min", "max", "mean", "std", "l2"}, py::arg("abs") = false,
          py::arg("mode") = py::none(),
          "{tensor: {'steps': [...], 'mean': [...], ...}}: reductions of every step for plotting "
          "(NaN where one is undefined), without pandas.")
      .def(
          "_prefetch",
          [](PyTrial& t, const std::vector<std::pair<std::string, int64_t>>& keys) {
            // RequiredTensors.fetch (smdebug_compat): read many (tensor, global step) values in
            // parallel before value() asks for them one by one.
            t.MaybeRefresh();
            py::gil_scoped_release nogil;
            std::shared_lock lock(t.mu());
            std::vector<Trial::StepTensor> views;
            views.reserve(keys.size());
            for (const auto& [name, step] : keys) views.emplace_back(name, step);
            t.trial().Prefetch(views);
          },
          py::arg("keys"))
      .def(
          "values",
          [](PyTrial& t, const py::object& names_arg, const py::object& steps_arg, const py::object& mode) {
            const Mode m = ToMode(mode);
            std::vector<std::string> names;
            if (names_arg.is_none()) {
              t.MaybeRefresh();
              std::shared_lock lock(t.mu());
              names = m == Mode::kGlobal ? t.trial().TensorNames() : t.trial().TensorNamesForMode(m);
            } else if (py::isinstance<py::str>(names_arg)) {
              names = {names_arg.cast<std::string>()};
            } else {
              names = names_arg.cast<std::vector<std::string>>();
            }
            std::optional<std::vector<int64_t>> steps;
            if (!steps_arg.is_none()) steps = steps_arg.cast<std::vector<int64_t>>();
            return TrialValues(t, names, steps, m);
          },
          py::arg("names") = py::none(), py::arg("steps") = py::none(), py::arg("mode") = py::none(),
          "{name: array of shape (len(steps), *shape)}: the values of many tensors at many steps, read "
          "file-major in parallel (each event file once). names: a list (or one name; default every "
          "tensor of `mode`); steps: the same steps for every tensor (default: each tensor's own "
          "steps of `mode`). Raises what value() raises (TensorUnavailable for an unknown name).")
      .def(
          "_read_all_cpp",
          [](PyTrial& t, bool file_major) {
            // Benchmark baseline (bench/python_bench.py): every raw value of every tensor read by
            // the C++ reader alone, as Tensor.values(steps) reads them (Trial::CopyValues into
            // one buffer per tensor, tensor by tensor) or, with file_major, as Trial.values()
            // does (Trial::CopyValuesFileMajor), with no Python objects. The buffers are
            // allocated and touched before the reads start; returns (bytes copied, seconds of the
            // reads alone, seconds of CPU of the process during the reads).
            py::gil_scoped_release nogil;
            std::shared_lock lock(t.mu());
            const Trial& trial = t.trial();
            uint64_t bytes = 0;
            std::vector<std::string> names = trial.TensorNames();
            std::vector<std::vector<int64_t>> steps(names.size());
            std::vector<std::vector<std::byte>> buffers(names.size());
            std::vector<Trial::ValuesTarget> targets;
            size_t largest = 0;
            for (size_t k = 0; k < names.size(); ++k) {
              steps[k] = trial.TensorSteps(names[k]);
              if (steps[k].empty()) continue;
              const StatusOr<TensorPtr> first = trial.Value(names[k], steps[k].front());
              if (!first.ok() || (*first)->is_string()) continue;
              const size_t size = (*first)->bytes().size() * steps[k].size();
              largest = std::max(largest, size);
              if (file_major) buffers[k].resize(size);
              targets.push_back({names[k], steps[k], (*first)->dtype(), (*first)->shape(),
                                 file_major ? std::span<std::byte>(buffers[k]) : std::span<std::byte>()});
            }
            std::vector<std::byte> one(file_major ? 0 : largest);  // tensor by tensor: one buffer reused
            const auto cpu_now = [] {
              rusage usage{};
              getrusage(RUSAGE_SELF, &usage);
              return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                     static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
            };
            const auto started = Clock::now();
            const double cpu_started = cpu_now();
            if (file_major) {
              const std::vector<std::vector<Status>> copied = trial.CopyValuesFileMajor(targets, Mode::kGlobal);
              for (size_t j = 0; j < targets.size(); ++j) {
                const size_t each = targets[j].out.size() / targets[j].steps.size();
                for (const Status& s : copied[j]) {
                  if (s.ok()) bytes += each;
                }
              }
            } else {
              for (const Trial::ValuesTarget& target : targets) {
                const StatusOr<TensorPtr> first = trial.Value(target.name, target.steps.front());
                const size_t each = (*first)->bytes().size();
                for (const Status& s : trial.CopyValues(target.name, target.steps, Mode::kGlobal, target.dtype,
                                                        target.shape,
                                                        std::span<std::byte>(one).first(each * target.steps.size()))) {
                  if (s.ok()) bytes += each;
                }
              }
            }
            return std::make_tuple(bytes, std::chrono::duration<double>(Clock::now() - started).count(),
                                   cpu_now() - cpu_started);
          },
          py::arg("file_major") = false)
      .def("__repr__", &TrialRepr);

  m.def(
      "create_trial",
      [](const std::string& path, const py::object& range_steps, double refresh_interval_s) {
        std::optional<std::pair<int64_t, int64_t>> range;
        if (!range_steps.is_none()) {
          const auto pair = range_steps.cast<std::pair<py::object, py::object>>();
          range = std::pair<int64_t, int64_t>(pair.first.is_none() ? 0 : pair.first.cast<int64_t>(),
                                              pair.second.is_none() ? INT64_MAX : pair.second.cast<int64_t>());
        }
        return std::make_shared<PyTrial>(path, range, refresh_interval_s);
      },
      py::arg("path"), py::arg("range_steps") = py::none(), py::arg("refresh_interval_s") = 1.0,
      "Opens a trial: a local folder or s3://bucket/prefix. range_steps=(begin, end) keeps the steps "
      "begin <= step < end. A live trial is refreshed by queries at most once per refresh_interval_s.");
}
