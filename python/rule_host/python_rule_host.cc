// python_rule_host.so: a rule plugin that runs smdebug rules written in Python (`litmus run
// --python-rule FILE.py --rule ClassName`, or SageMaker's source_s3_uri + rule_to_invoke). It
// embeds CPython, loads the file, builds the Rule subclass with the rule parameters as keyword
// arguments, and calls its set_required_tensors / invoke_at_step. The rule's base_trial and
// req_tensors are backed by the host table through the SDK's C++ layer (litmus/rule.hpp), so the
// runner prefetches what the rule requires like any plugin's. Links litmus::sdk and libpython only.
// Threading: one interpreter per process, started by the first create and never finalized; every
// call takes the GIL, so instances on different threads take turns.
#include <dlfcn.h>
#include <pybind11/embed.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "litmus/rule.hpp"

namespace py = pybind11;

namespace {

// A failure with the status the host receives (litmus::Error's status constructor is protected).
class StatusError : public litmus::Error {
 public:
  StatusError(const std::string& message, litmus_status_t status) : Error(message, status) {}
};

class PythonRule;
// The rule whose host call runs on this thread (for _litmus_host.log).
thread_local PythonRule* current_rule = nullptr;

struct CurrentRuleScope {
  explicit CurrentRuleScope(PythonRule* rule) : previous(std::exchange(current_rule, rule)) {}
  ~CurrentRuleScope() { current_rule = previous; }
  PythonRule* previous;
};

// ---- Python objects of the _litmus_host module ------------------------------------------------

// Classes of litmus/exceptions.py and litmus/modes.py, and the driver (litmus/_rule_host.py).
struct PyState {
  py::object mode_keys, step_state, driver;
  py::object tensor_unavailable, tensor_unavailable_for_step, invalid_worker, step_not_yet_available,
      step_unavailable, no_more_data;
};
PyState* state = nullptr;  // set once the interpreter runs; lives as long as the process

litmus::Mode ToMode(const py::object& mode) {
  if (mode.is_none()) return litmus::Mode::kGlobal;
  py::object value = py::hasattr(mode, "value") ? mode.attr("value") : mode;
  const int64_t v = value.cast<int64_t>();
  if (v < 1 || v > 4) throw py::value_error("unknown mode " + py::repr(mode).cast<std::string>());
  return static_cast<litmus::Mode>(v);
}

py::object ModeObject(litmus::Mode mode) { return state->mode_keys(static_cast<int>(mode)); }

std::string ToWorker(const py::object& worker) { return worker.is_none() ? std::string() : worker.cast<std::string>(); }

[[noreturn]] void Raise(const py::object& cls, const py::object& instance) {
  PyErr_SetObject(cls.ptr(), instance.ptr());
  throw py::error_already_set();
}

// Runs a host access; an SDK exception becomes smdebug's Python exception for (tensor, step, mode).
template <class F>
auto Guard(F&& f, const std::string& tensor = {}, int64_t step = -1, litmus::Mode mode = litmus::Mode::kGlobal,
           const std::string& worker = {}) -> decltype(f()) {
  try {
    return f();
  } catch (const litmus::Error& e) {
    switch (e.status()) {
      case LITMUS_TENSOR_UNAVAILABLE_FOR_STEP:
        Raise(state->tensor_unavailable_for_step, state->tensor_unavailable_for_step(tensor, step, ModeObject(mode)));
      case LITMUS_TENSOR_UNAVAILABLE: Raise(state->tensor_unavailable, state->tensor_unavailable(tensor));
      case LITMUS_STEP_UNAVAILABLE: Raise(state->step_unavailable, state->step_unavailable(step, ModeObject(mode)));
      case LITMUS_NOT_YET_AVAILABLE:
        Raise(state->step_not_yet_available, state->step_not_yet_available(step, ModeObject(mode)));
      case LITMUS_NO_MORE_DATA: Raise(state->no_more_data, state->no_more_data(step, ModeObject(mode), -1));
      case LITMUS_INVALID_WORKER: Raise(state->invalid_worker, state->invalid_worker(worker));
      case LITMUS_INVALID_ARGUMENT: throw py::value_error(e.what());
      default: throw std::runtime_error(e.what());
    }
  }
}

const char* NumpyName(litmus::DType dtype) {
  switch (dtype) {
    case litmus::DType::kFloat32: return "float32";
    case litmus::DType::kFloat64: return "float64";
    case litmus::DType::kFloat16: return "float16";
    case litmus::DType::kInt8: return "int8";
    case litmus::DType::kUInt8: return "uint8";
    case litmus::DType::kInt16: return "int16";
    case litmus::DType::kUInt16: return "uint16";
    case litmus::DType::kInt32: return "int32";
    case litmus::DType::kUInt32: return "uint32";
    case litmus::DType::kInt64: return "int64";
    case litmus::DType::kUInt64: return "uint64";
    case litmus::DType::kBool: return "bool";
    case litmus::DType::kComplex64: return "complex64";
    case litmus::DType::kComplex128: return "complex128";
    case litmus::DType::kString: break;
  }
  return nullptr;
}

// A numpy array holding a copy of the view: the host's view is valid only during the call, and a
// rule may keep what value() returned (smdebug's arrays are the rule's own).
py::array ToArray(const litmus::TensorView& view) {
  std::vector<py::ssize_t> shape(view.shape().begin(), view.shape().end());
  if (view.is_string()) {
    py::list items;
    for (int64_t i = 0; i < view.num_elements(); ++i) {
      const std::string_view s = view.string_at(i);
      items.append(py::reinterpret_steal<py::object>(
          PyUnicode_DecodeUTF8(s.data(), static_cast<py::ssize_t>(s.size()), "replace")));
    }
    return py::module_::import("numpy").attr("array")(items, py::arg("dtype") = "str").attr("reshape")(
        py::tuple(py::cast(shape)));
  }
  const char* name = NumpyName(view.dtype());
  if (name == nullptr) throw py::type_error("tensor " + view.name() + ": unsupported dtype");
  py::array out{py::dtype(name), shape};
  if (view.byte_size() != 0 && view.data() != nullptr) {
    std::memcpy(out.mutable_data(), view.data(), static_cast<size_t>(view.byte_size()));
  }
  return out;
}

// A trial of the job, as the rule sees it (smdebug's Trial, the subset a rule job offers).
struct HostTrial {
  PythonRule* rule;
  litmus::Trial trial;
};
struct HostTensor {
  PythonRule* rule;
  litmus::Tensor tensor;
};
// smdebug's RequiredTensors over the SDK's (whatever the current host call declares or reads).
struct HostRequired {
  PythonRule* rule;
};

// ---- The rule --------------------------------------------------------------------------------

std::once_flag python_once;
std::string python_error;  // why the interpreter could not start (empty: it runs)

void DefineHostModule();

// This plugin's folder: litmus/ and smdebug_compat/ are beside it (build tree and install alike).
std::string PluginDir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&PluginDir), &info) == 0 || info.dli_fname == nullptr) return ".";
  std::string path = info.dli_fname;
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// Starts the interpreter (once per process) and releases the GIL for the calls to take it.
void StartPython() {
  // The plugin was dlopened RTLD_LOCAL, so libpython's symbols are not global; extension modules
  // (numpy's) expect them to be: make libpython global, as an embedding executable would.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&Py_IsInitialized), &info) != 0 && info.dli_fname != nullptr) {
    if (dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) == nullptr) {
      python_error = std::string("cannot make libpython global: ") + dlerror();
      return;
    }
  }
  if (Py_IsInitialized() != 0) {
    python_error = "a Python interpreter already runs in this process";
    return;
  }
  // No signal handlers: SIGINT/SIGTERM stay litmus's.
  py::initialize_interpreter(/*init_signal_handlers=*/false, 0, nullptr, /*add_program_dir_to_path=*/false);
  try {
    const std::string dir = PluginDir();
    py::list path = py::module_::import("sys").attr("path");
    path.insert(0, dir + "/smdebug_compat");
    path.insert(0, dir);
    DefineHostModule();
    py::module_ exceptions = py::module_::import("litmus.exceptions");
    py::module_ modes = py::module_::import("litmus.modes");
    state = new PyState{modes.attr("ModeKeys"),
                        modes.attr("StepState"),
                        py::module_::import("litmus._rule_host"),
                        exceptions.attr("TensorUnavailable"),
                        exceptions.attr("TensorUnavailableForStep"),
                        exceptions.attr("InvalidWorker"),
                        exceptions.attr("StepNotYetAvailable"),
                        exceptions.attr("StepUnavailable"),
                        exceptions.attr("NoMoreData")};
    state->driver.attr("setup")();
  } catch (const py::error_already_set& e) {
    python_error = std::string("cannot set up Python rules: ") + e.what();
  }
  PyEval_SaveThread();  // never restored: the interpreter lives until the process ends
}

class PythonRule : public litmus::Rule {
 public:
  explicit PythonRule(const litmus::RuleArgs& args) : Rule(args) {
    const std::string source = param_string("source_s3_uri");
    // Set by the runner for an s3:// source: its local copy (messages keep naming the URI).
    const std::string source_file = param_optional_string("source_file").value_or("");
    const std::string class_name = param_string("rule_to_invoke");
    const std::string params = param_optional_string("rule_parameters").value_or("{}");
    const bool allow_unknown = param_bool("allow_unknown_params");
    std::call_once(python_once, StartPython);
    if (!python_error.empty()) throw StatusError(python_error, LITMUS_INTERNAL);
    py::gil_scoped_acquire gil;
    CurrentRuleScope scope(this);
    try {
      py::list others;
      for (const litmus::Trial& t : other_trials()) others.append(HostTrial{this, t});
      rule_ = state->driver.attr("create_rule")(source, class_name, params, HostTrial{this, base_trial()}, others,
                                                allow_unknown, source_file.empty() ? py::object(py::none())
                                                                                   : py::object(py::str(source_file)));
    } catch (py::error_already_set& e) {
      // Anything wrong while loading the file or building the rule is the user's: a client error.
      Rethrow(e, LITMUS_INVALID_CONFIG);
    }
  }
  ~PythonRule() override {
    py::gil_scoped_acquire gil;
    rule_ = py::object();
  }

  void set_required_tensors(int64_t step) override { Call("set_required_tensors", step); }
  bool invoke_at_step(int64_t step) override { return Call("invoke_at_step", step); }

  // Logging from Python (its logging module and print) through the host.
  void Log(int32_t level, const std::string& text) const {
    log(static_cast<litmus::LogLevel>(level), text);
  }
  void Violations(int64_t count) { report_violations(count); }
  void Detail(const std::string& key, const std::string& json) { report_detail(key, std::string_view(json)); }

 private:
  bool Call(const char* method, int64_t step) {
    py::gil_scoped_acquire gil;
    CurrentRuleScope scope(this);
    try {
      return state->driver.attr("call")(rule_, method, step).cast<bool>();
    } catch (py::error_already_set& e) {
      Rethrow(e, LITMUS_INTERNAL);
    }
  }

  // The status and one-line text of a Python exception (litmus/_rule_host.py classify): smdebug's
  // exceptions map to the statuses the runner skips or ends on; any other gets `fallback`
  // (LITMUS_INVALID_CONFIG while building the rule, LITMUS_INTERNAL from its methods).
  [[noreturn]] static void Rethrow(py::error_already_set& e, litmus_status_t fallback) {
    std::pair<int32_t, std::string> outcome;
    try {
      outcome = state->driver.attr("classify")(e.value(), e.trace(), static_cast<int32_t>(fallback))
                    .cast<std::pair<int32_t, std::string>>();
    } catch (const py::error_already_set& inner) {
      outcome = {fallback, std::string(e.what()) + " (and classifying it failed: " + inner.what() + ")"};
    }
    throw StatusError(outcome.second, outcome.first);
  }

  py::object rule_;
};

// ---- The _litmus_host module (created after the interpreter starts, never at dlopen) -----------

std::vector<std::string> Names(const litmus::Trial& trial, const py::object& collection, const py::object& regex,
                               const py::object& step, const py::object& mode) {
  litmus::TensorQuery query;
  std::string regex_text;
  if (!regex.is_none()) {
    if (py::isinstance<py::str>(regex)) {
      regex_text = regex.cast<std::string>();
    } else {
      // Several patterns: any of them (re.search each).
      std::string joined;
      for (const py::handle p : regex) joined += (joined.empty() ? "(?:" : "|(?:") + py::str(p).cast<std::string>() + ")";
      regex_text = joined;
    }
    query.regex = regex_text;
  }
  if (!step.is_none()) query.step = step.cast<int64_t>();
  if (!mode.is_none()) query.mode = ToMode(mode);
  if (!step.is_none() && query.mode && *query.mode != litmus::Mode::kGlobal) {
    query.step = trial.global_step(*query.mode, *query.step);
  }
  if (collection.is_none() || py::isinstance<py::str>(collection)) {
    const std::string c = collection.is_none() ? std::string() : collection.cast<std::string>();
    query.collection = c;
    return trial.tensor_names(query);
  }
  std::vector<std::string> out;
  for (const py::handle c : collection) {
    const std::string name = py::str(c).cast<std::string>();
    query.collection = name;
    for (std::string& n : trial.tensor_names(query)) out.push_back(std::move(n));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

py::object StepStateOf(const litmus::Trial& trial, int64_t step, litmus::Mode mode) {
  const std::vector<int64_t> steps = trial.steps(mode);
  const auto it = std::lower_bound(steps.begin(), steps.end(), step);
  if (it != steps.end() && *it == step) return state->step_state(1);    // AVAILABLE
  if (it != steps.end()) return state->step_state(0);                   // skipped: UNAVAILABLE
  return state->step_state(2);                                          // NOT_YET_AVAILABLE
}

void DefineHostModule() {
  static PyModuleDef def{};
  py::module_ m = py::module_::create_extension_module(
      "_litmus_host", "The trial of a rule run by litmus (python_rule_host.so): host-backed smdebug API", &def);

  m.def("log", [](int32_t level, const std::string& text) {
    if (current_rule != nullptr) {
      current_rule->Log(level, text);
    } else {
      py::print(text, py::arg("file") = py::module_::import("sys").attr("__stderr__"));
    }
  });
  m.def("report_violations", [](int64_t count) {
    if (current_rule == nullptr) throw std::runtime_error("report_violations outside a rule call");
    Guard([&] { current_rule->Violations(count); });
  });
  m.def("report_detail", [](const std::string& key, const std::string& json) {
    if (current_rule == nullptr) throw std::runtime_error("report_detail outside a rule call");
    Guard([&] { current_rule->Detail(key, json); });
  });

  py::class_<HostTensor>(m, "Tensor", "A tensor of a trial of the rule job (smdebug's Tensor)")
      .def_property_readonly("name", [](const HostTensor& t) { return t.tensor.name(); })
      .def(
          "value",
          [](const HostTensor& t, int64_t step_num, const py::object& mode, const py::object& worker) {
            const litmus::Mode m = ToMode(mode);
            return Guard([&] { return ToArray(t.tensor.value(step_num, m, ToWorker(worker))); }, t.tensor.name(),
                         step_num, m, ToWorker(worker));
          },
          py::arg("step_num"), py::arg("mode") = py::none(), py::arg("worker") = py::none())
      .def(
          "values",
          [](const HostTensor& t, const py::object& steps, const py::object& mode, const py::object& worker) -> py::object {
            litmus::Mode m = ToMode(mode);
            py::object list = steps;
            if (!steps.is_none() && py::hasattr(steps, "name")) {
              m = ToMode(steps);
              list = py::none();
            }
            std::vector<int64_t> wanted = list.is_none() ? Guard([&] { return t.tensor.steps(m); }, t.tensor.name())
                                                         : list.cast<std::vector<int64_t>>();
            std::vector<py::array> arrays;
            for (int64_t s : wanted) {
              arrays.push_back(Guard([&] { return ToArray(t.tensor.value(s, m, ToWorker(worker))); }, t.tensor.name(),
                                     s, m, ToWorker(worker)));
            }
            if (list.is_none()) {
              py::dict out;
              for (size_t i = 0; i < wanted.size(); ++i) out[py::int_(wanted[i])] = arrays[i];
              return out;
            }
            return py::module_::import("numpy").attr("stack")(arrays);
          },
          py::arg("steps") = py::none(), py::arg("mode") = py::none(), py::arg("worker") = py::none())
      .def(
          "reduction_value",
          [](const HostTensor& t, int64_t step_num, const std::string& reduction_name, const py::object& mode,
             const py::object& worker, bool abs) {
            const litmus::Mode m = ToMode(mode);
            return Guard([&] { return t.tensor.reduction_value(step_num, reduction_name, abs, m, ToWorker(worker)); },
                         t.tensor.name(), step_num, m, ToWorker(worker));
          },
          py::arg("step_num"), py::arg("reduction_name"), py::arg("mode") = py::none(),
          py::arg("worker") = py::none(), py::arg("abs") = false)
      .def(
          "shape",
          [](const HostTensor& t, int64_t step_num, const py::object& mode, const py::object& worker) {
            const litmus::Mode m = ToMode(mode);
            const auto shape = Guard([&] { return t.tensor.shape(step_num, m, ToWorker(worker)); }, t.tensor.name(),
                                     step_num, m, ToWorker(worker));
            return py::tuple(py::cast(shape));
          },
          py::arg("step_num"), py::arg("mode") = py::none(), py::arg("worker") = py::none())
      .def(
          "steps",
          [](const HostTensor& t, const py::object& mode, bool show_incomplete_steps) {
            static_cast<void>(show_incomplete_steps);
            return Guard([&] { return t.tensor.steps(ToMode(mode)); }, t.tensor.name());
          },
          py::arg("mode") = py::none(), py::arg("show_incomplete_steps") = false)
      .def(
          "prev_steps",
          [](const HostTensor& t, int64_t step, int64_t n, const py::object& mode) {
            const std::vector<int64_t> steps = Guard([&] { return t.tensor.steps(ToMode(mode)); }, t.tensor.name());
            const auto end = std::lower_bound(steps.begin(), steps.end(), step);
            const auto begin = end - std::min<std::ptrdiff_t>(n, end - steps.begin());
            return std::vector<int64_t>(begin, end);
          },
          py::arg("step"), py::arg("n"), py::arg("mode") = py::none())
      .def(
          "workers",
          [](const HostTensor& t, int64_t step_num, const py::object& mode) {
            // The host table has no per-step worker list: ask each worker for the shape.
            const litmus::Mode m = ToMode(mode);
            std::vector<std::string> out;
            for (const std::string& w : Guard([&] { return t.tensor.trial().workers(); })) {
              try {
                t.tensor.shape(step_num, m, w);
                out.push_back(w);
              } catch (const litmus::Error&) {
              }
            }
            return out;
          },
          py::arg("step_num"), py::arg("mode") = py::none())
      .def("__repr__", [](const HostTensor& t) { return "<litmus rule job Tensor '" + t.tensor.name() + "'>"; });

  py::class_<HostTrial>(m, "Trial", "A trial of the rule job (smdebug's Trial; the runner refreshes it)")
      .def_property_readonly("name",
                             [](const HostTrial& t) {
                               return t.trial.is_base() ? std::string("base_trial")
                                                        : "other_trial_" + std::to_string(t.trial.index() - 1);
                             })
      .def(
          "steps",
          [](const HostTrial& t, const py::object& mode, bool show_incomplete_steps) {
            static_cast<void>(show_incomplete_steps);
            return Guard([&] { return t.trial.steps(ToMode(mode)); });
          },
          py::arg("mode") = py::none(), py::arg("show_incomplete_steps") = false)
      .def(
          "tensor_names",
          [](const HostTrial& t, const py::object& collection, const py::object& regex, const py::object& step,
             const py::object& mode, bool show_prefixed_tensors) {
            static_cast<void>(show_prefixed_tensors);
            return Guard([&] { return Names(t.trial, collection, regex, step, mode); });
          },
          py::arg("collection") = py::none(), py::arg("regex") = py::none(), py::arg("step") = py::none(),
          py::arg("mode") = py::none(), py::arg("show_prefixed_tensors") = false)
      .def(
          "tensor",
          [](const HostTrial& t, const std::string& name) {
            if (!Guard([&] { return t.trial.has_tensor(name); })) {
              Raise(state->tensor_unavailable, state->tensor_unavailable(name));
            }
            return HostTensor{t.rule, t.trial.tensor(name)};
          },
          py::arg("tname"))
      .def(
          "has_tensor", [](const HostTrial& t, const std::string& name) { return Guard([&] { return t.trial.has_tensor(name); }); },
          py::arg("tname"))
      .def("workers", [](const HostTrial& t) { return Guard([&] { return t.trial.workers(); }); })
      .def_property_readonly("num_workers",
                             [](const HostTrial& t) { return Guard([&] { return t.trial.workers().size(); }); })
      .def(
          "mode",
          [](const HostTrial& t, int64_t global_step) {
            return ModeObject(Guard([&] { return t.trial.step_mode(global_step); }, {}, global_step));
          },
          py::arg("global_step"))
      .def(
          "mode_step",
          [](const HostTrial& t, int64_t global_step) {
            return Guard([&] { return t.trial.mode_step(global_step); }, {}, global_step);
          },
          py::arg("global_step"))
      .def(
          "global_step",
          [](const HostTrial& t, const py::object& mode, int64_t mode_step) {
            const litmus::Mode m = ToMode(mode);
            if (m == litmus::Mode::kGlobal) return mode_step;
            return Guard([&] { return t.trial.global_step(m, mode_step); }, {}, mode_step, m);
          },
          py::arg("mode"), py::arg("mode_step"))
      .def(
          "has_passed_step",
          [](const HostTrial& t, int64_t step, const py::object& mode) {
            const litmus::Mode m = ToMode(mode);
            return Guard([&] { return StepStateOf(t.trial, step, m); });
          },
          py::arg("step"), py::arg("mode") = py::none())
      .def(
          "wait_for_steps",
          [](const HostTrial& t, const std::vector<int64_t>& steps, const py::object& mode) {
            // The runner waits for the steps it evaluates; a rule cannot wait inside its call.
            const litmus::Mode m = ToMode(mode);
            for (int64_t s : steps) {
              const int state_value = Guard([&] { return StepStateOf(t.trial, s, m); }).attr("value").cast<int>();
              if (state_value == 0) Raise(state->step_unavailable, state->step_unavailable(s, ModeObject(m)));
              if (state_value == 2) Raise(state->step_not_yet_available, state->step_not_yet_available(s, ModeObject(m)));
            }
          },
          py::arg("required_steps"), py::arg("mode") = py::none())
      .def_property_readonly("last_complete_step",
                             [](const HostTrial& t) {
                               const auto steps = Guard([&] { return t.trial.steps(); });
                               return steps.empty() ? int64_t{-1} : steps.back();
                             })
      .def_property_readonly("loaded_all_steps", [](const HostTrial&) { return false; })
      .def("collections",
           [](const HostTrial&) -> py::object {
             PyErr_SetString(PyExc_NotImplementedError,
                             "collections() is not available to rules run by litmus run; use "
                             "tensor_names(collection=NAME)");
             throw py::error_already_set();
           })
      .def("_litmus_required_tensors", [](const HostTrial& t, const py::object&) { return HostRequired{t.rule}; },
           py::arg("other_trials") = py::none())
      .def("__eq__", [](const HostTrial& a, const HostTrial& b) { return a.trial == b.trial; })
      .def("__hash__", [](const HostTrial& t) { return std::hash<uint32_t>()(t.trial.index()); })
      .def("__repr__", [](const HostTrial& t) { return "<litmus rule job Trial " + std::to_string(t.trial.index()) + ">"; });

  const auto trial_of = [](PythonRule* rule, const py::object& trial) -> litmus::Trial {
    if (trial.is_none()) return static_cast<litmus::Rule*>(rule)->base_trial();
    return trial.cast<const HostTrial&>().trial;
  };
  py::class_<HostRequired>(m, "RequiredTensors", "smdebug's RequiredTensors, declared to the runner")
      .def(
          "add",
          [trial_of](const HostRequired& r, const std::string& name, const std::vector<int64_t>& steps,
                     const py::object& trial, bool should_match_regex, bool reductions_only) {
            Guard([&] {
              static_cast<litmus::Rule*>(r.rule)->req_tensors().add(
                  name, steps, trial_of(r.rule, trial),
                  litmus::RequireOptions{.should_match_regex = should_match_regex, .reductions_only = reductions_only});
            }, name);
          },
          py::arg("name"), py::arg("steps"), py::arg("trial") = py::none(), py::arg("should_match_regex") = false,
          py::arg("reductions_only") = false)
      .def(
          "get",
          [trial_of](const HostRequired& r, const py::object& trial) {
            py::list out;
            for (const litmus::Tensor& t :
                 Guard([&] { return static_cast<litmus::Rule*>(r.rule)->req_tensors().get(trial_of(r.rule, trial)); })) {
              out.append(HostTensor{r.rule, t});
            }
            return out;
          },
          py::arg("trial") = py::none())
      .def(
          "get_names",
          [trial_of](const HostRequired& r, const py::object& trial) {
            return Guard([&] { return static_cast<litmus::Rule*>(r.rule)->req_tensors().get_names(trial_of(r.rule, trial)); });
          },
          py::arg("trial") = py::none())
      .def(
          "get_tensor_steps",
          [trial_of](const HostRequired& r, const std::string& name, const py::object& trial) {
            return Guard([&] {
              return static_cast<litmus::Rule*>(r.rule)->req_tensors().get_tensor_steps(name, trial_of(r.rule, trial));
            });
          },
          py::arg("name"), py::arg("trial") = py::none())
      .def("fetch", [](const HostRequired&) {})  // the runner fetched them before invoke_at_step
      .def("clear", [](const HostRequired& r) { static_cast<litmus::Rule*>(r.rule)->req_tensors().clear(); });

  py::module_::import("sys").attr("modules")["_litmus_host"] = m;
}

}  // namespace

LITMUS_RULE_PLUGIN(
    "python_rule_host", "1.0.0",
    LITMUS_RULE(PythonRule, "PythonRule", "1.0.0",
                "Runs an smdebug Rule subclass written in Python (litmus run --python-rule FILE.py --rule CLASS)",
                litmus::Required(litmus::StringParam("source_s3_uri", "",
                                                     "the Python file holding the rule class: a local path or "
                                                     "s3://bucket/key.py")),
                litmus::StringParam("source_file", "",
                                    "set by litmus run for an s3:// source_s3_uri: the local copy it fetched "
                                    "at job start (empty: source_s3_uri is a local file)"),
                litmus::Required(litmus::StringParam("rule_to_invoke", "", "the Rule subclass to run")),
                litmus::StringParam("rule_parameters", "{}",
                                    "the rule's own parameters as a JSON object of strings, passed to its "
                                    "constructor as keyword arguments"),
                litmus::BoolParam("allow_unknown_params", "false",
                                  "drop (with a warning) parameters the constructor does not take")));
