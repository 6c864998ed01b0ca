// litmus::writer::Writer: step/mode bookkeeping, collection matching, record encoding and the
// tmp+rename publication of event, index, collections and end-marker files; see writer.h.
// A Writer is used by one thread at a time.
#include "litmus/writer/writer.h"

#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "event_sink.h"
#include "litmus/format/event_codec.h"
#include "litmus/format/index_model.h"
#include "litmus/format/trial_layout.h"
#include "tensor_stats.h"
#include "tensorboard_export.h"

namespace litmus::writer {

static_assert(std::endian::native == std::endian::little,
              "litmus::writer stores the caller's bytes as little-endian tensor_content");

namespace {

constexpr std::string_view kScalarPrefix = "scalar/";

size_t ModeIndex(Mode mode) { return static_cast<size_t>(mode) - 1; }

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// DTypes smdebug 1.0.34 writes and reads back correctly (docs/trial-format.md §3.7).
bool SmdebugReadsDType(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt8:
    case DType::kBool:
    case DType::kComplex128:
      return true;
    case DType::kInt8:
    case DType::kInt16:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
    case DType::kComplex64:
    case DType::kInvalid:
    case DType::kString:
      return false;
  }
  return false;
}

std::string ShapeString(std::span<const int64_t> shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

double SystemWallTime() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration<double>(now).count();
}

void LogToStderr(LogLevel level, std::string_view message) {
  const char* tag = level == LogLevel::kError     ? "error"
                    : level == LogLevel::kWarning ? "warning"
                                                  : "info";
  std::fprintf(stderr, "litmus::writer %s: %.*s\n", tag, static_cast<int>(message.size()),
               message.data());
}

struct CollectionState {
  CollectionConfig config;
  std::array<SaveConfigMode, 4> save_modes;  // resolved, indexed by ModeIndex
  ReductionConfig reduction;                 // resolved
  std::vector<std::regex> regexes;
  std::set<std::string> tensor_names;        // listed + matched so far (exported sorted)
  bool skipped_in_eval_predict = false;      // gradients, optimizer_variables
  bool scalar = false;
};

}  // namespace

struct Writer::Impl {
  std::string out_dir;
  WriterOptions options;
  Env* env = nullptr;
  LogFunction log;
  std::function<double()> clock;

  std::vector<CollectionState> collections;
  std::optional<size_t> default_collection;
  // Per tensor name: its collections (matched on first sight and cached, as smdebug does) and
  // the last step it was saved at (to refuse duplicates without per-step bookkeeping).
  struct TensorInfo {
    bool matched = false;
    std::vector<size_t> collections;
    int64_t saved_at_step = -1;
  };
  std::unordered_map<std::string, TensorInfo, StringHash, std::equal_to<>> tensors;

  int64_t step = -1;
  Mode mode = Mode::kGlobal;
  std::array<std::optional<int64_t>, 4> mode_steps = {std::nullopt, std::nullopt, std::nullopt,
                                                      int64_t{-1}};
  bool in_step = false;
  bool closed = false;
  std::vector<bool> due;  // per collection, for the open step

  // The open step.
  internal::EventSink sink;
  std::string event_rel;  // events/<S12>/<S12>_<w>.tfevents
  IndexFile index;
  Status step_error;      // non-OK once the open step was abandoned

  // TensorBoard summaries; nullptr unless exported (WriterOptions::export_tensorboard).
  std::unique_ptr<internal::TensorBoardExport> tensorboard;
  std::string tensorboard_dir;

  bool collections_written = false;
  // A collection's tensor_names grew after the collections file was written (a tensor first
  // seen after the first step); Close() then writes the file again.
  bool collections_stale = false;
  std::string created_index_dir;

  Impl(std::string dir, WriterOptions opts, Env* e)
      : out_dir(std::move(dir)),
        options(std::move(opts)),
        env(e),
        sink(e, options.write_buffer_bytes, options.write_payload_crc) {}

  std::string Path(std::string_view relative) const { return Env::JoinPath(out_dir, relative); }
  void Log(LogLevel level, const std::string& message) const { log(level, message); }
  std::string Where() const {
    return "worker " + options.worker + " step " + std::to_string(step);
  }

  int64_t CurrentModeStep() const { return mode_steps[ModeIndex(mode)].value_or(-1); }

  Status CheckWritable() const {
    if (closed) {
      return FailedPreconditionError("writer for " + options.worker + " in " + out_dir +
                                     " is closed");
    }
    if (!in_step) {
      return FailedPreconditionError("writer for " + options.worker +
                                     ": no open step (call BeginStep() first)");
    }
    if (!step_error.ok()) {
      return FailedPreconditionError(Where() + " was abandoned after an earlier error: " +
                                     step_error.ToString());
    }
    return OkStatus();
  }

  TensorInfo& Info(std::string_view name) {
    auto it = tensors.find(name);
    if (it == tensors.end()) it = tensors.emplace(std::string(name), TensorInfo{}).first;
    return it->second;
  }

  // `name`'s info with its collections matched: listed in tensor_names, or an include_regex
  // matches anywhere; names matching nothing join `default` if there is one. Matched names are
  // added to the collection's tensor_names, as smdebug's hook does.
  TensorInfo& Matched(std::string_view name) {
    auto it = tensors.find(name);
    if (it == tensors.end()) it = tensors.emplace(std::string(name), TensorInfo{}).first;
    TensorInfo& info = it->second;
    if (info.matched) return info;
    const std::string& key = it->first;
    for (size_t i = 0; i < collections.size(); ++i) {
      CollectionState& c = collections[i];
      if (c.tensor_names.count(key) > 0) {
        info.collections.push_back(i);
        continue;
      }
      for (const std::regex& re : c.regexes) {
        if (std::regex_search(key, re)) {
          c.tensor_names.insert(key);
          collections_stale = collections_written;
          info.collections.push_back(i);
          break;
        }
      }
    }
    if (info.collections.empty() && default_collection.has_value()) {
      collections[*default_collection].tensor_names.insert(key);
      info.collections.push_back(*default_collection);
      collections_stale = collections_written;
    }
    info.matched = true;
    return info;
  }

  bool AnyDue(const TensorInfo& info) const {
    for (size_t i : info.collections) {
      if (due[i]) return true;
    }
    return false;
  }

  // Abandons the open step after an error: removes its files, keeps `error` for later calls.
  Status Abandon(Status error) {
    sink.Discard();
    if (tensorboard) tensorboard->DiscardStep();
    if (!event_rel.empty()) {
      (void)env->RemoveFile(Path(event_rel) + std::string(layout::kTmpSuffix));
    }
    step_error = error;
    return error;
  }

  Status AppendRecord(std::string_view tag, DType dtype, std::span<const int64_t> shape,
                      std::span<const std::byte> content,
                      std::span<const std::string_view> strings) {
    if (!sink.is_open()) {
      event_rel = layout::EventFilePath(step, options.worker);
      const std::string final_path = Path(event_rel);
      const std::string dir = final_path.substr(0, final_path.rfind('/'));
      Status status = env->CreateDirs(dir);
      if (status.ok()) status = sink.Open(final_path + std::string(layout::kTmpSuffix));
      if (!status.ok()) return Abandon(status.WithContext(Where()));
    }
    TensorEventSpec spec;
    spec.wall_time = clock();
    spec.step = step;
    spec.tag = tag;
    spec.mode = mode;
    spec.mode_step = CurrentModeStep();
    spec.dtype = dtype;
    spec.shape = shape;
    spec.content = content;
    spec.strings = strings;
    const EncodedEvent encoded = EncodeTensorEvent(spec);
    uint64_t offset = 0;
    uint64_t length = 0;
    Status status = sink.Append(encoded, &offset, &length);
    if (!status.ok()) {
      return Abandon(status.WithContext(Where() + ", tensor " + std::string(tag)));
    }
    index.tensor_payload.push_back(IndexEntry{std::string(tag), offset, length});
    return OkStatus();
  }

  Status SaveValidated(std::string_view name, DType dtype, std::span<const int64_t> shape,
                       int64_t count, std::span<const std::byte> data,
                       std::span<const std::string_view> strings) {
    TensorInfo& info = Matched(name);
    if (!AnyDue(info)) return OkStatus();
    if (info.saved_at_step == step) {
      return InvalidArgumentError("tensor " + std::string(name) + " was already saved at " +
                                  Where());
    }
    info.saved_at_step = step;
    // Union of the due collections' configs, each (reduction, abs) once (smdebug's
    // _write_reductions), in collection order.
    bool save_raw = false;
    bool save_shape = false;
    std::array<std::pair<layout::Reduction, bool>, 2 * std::size(layout::kAllReductions)> wanted;
    size_t num_wanted = 0;
    const auto want = [&](const std::vector<layout::Reduction>& list, bool abs) {
      for (layout::Reduction r : list) {
        const std::pair<layout::Reduction, bool> key(r, abs);
        if (std::find(wanted.begin(), wanted.begin() + num_wanted, key) == wanted.begin() + num_wanted) {
          wanted[num_wanted++] = key;
        }
      }
    };
    for (size_t i : info.collections) {
      if (!due[i]) continue;
      const CollectionState& c = collections[i];
      save_raw = save_raw || c.reduction.save_raw_tensor;
      save_shape = save_shape || c.reduction.save_shape;
      if (c.scalar) continue;  // scalar collections never store reductions
      want(c.reduction.reductions, false);
      want(c.reduction.norms, false);
      want(c.reduction.abs_reductions, true);
      want(c.reduction.abs_norms, true);
    }

    if (save_shape && (!save_raw || options.write_shape_with_raw_tensor)) {
      index.shape_payload.push_back(
          ShapeEntry{std::string(name), std::string(name), std::vector<int64_t>(shape.begin(), shape.end())});
    }

    std::array<std::optional<StatusOr<internal::TensorStats>>, 2> stats;  // [abs]
    for (size_t k = 0; k < num_wanted; ++k) {
      const auto [reduction, abs] = wanted[k];
      auto& slot = stats[abs ? 1 : 0];
      if (!slot.has_value()) slot.emplace(internal::ComputeStats(dtype, data, count, abs));
      if (!slot->ok()) {
        Log(LogLevel::kWarning,
            "skipped reduction " + std::string(abs ? "abs_" : "") +
                std::string(layout::ReductionName(reduction)) + " of " + std::string(name) +
                " at " + Where() + ": " + slot->status().message());
        continue;
      }
      const double value = (*slot)->Get(reduction);
      const std::string reduction_name =
          layout::ReductionTensorName(reduction, abs, name, /*strip_colon_digits=*/false);
      LITMUS_RETURN_IF_ERROR(AppendRecord(reduction_name, DType::kFloat64, {},
                                          std::as_bytes(std::span(&value, 1)), {}));
    }
    if (save_raw) LITMUS_RETURN_IF_ERROR(AppendRecord(name, dtype, shape, data, strings));
    if (tensorboard && tensorboard->active()) AddSummaries(name, info, dtype, count, data);
    return OkStatus();
  }

  // smdebug's _write_histogram_summary and _write_scalar_summary: a histogram for the first due
  // collection with save_histogram (never a scalar collection), a scalar for a single-element
  // tensor of a due scalar collection; both at the global step.
  void AddSummaries(std::string_view name, const TensorInfo& info, DType dtype, int64_t count,
                    std::span<const std::byte> data) {
    for (size_t i : info.collections) {
      const CollectionState& c = collections[i];
      if (!due[i] || c.scalar || !c.config.save_histogram) continue;
      tensorboard->AddHistogram(step, c.config.name + "/" + std::string(name), dtype, data, count, clock());
      break;
    }
    for (size_t i : info.collections) {
      if (!due[i] || !collections[i].scalar) continue;
      if (count == 1) {
        std::optional<double> value;
        (void)internal::ForEachReal(dtype, data, 1, [&value](double v) { value = v; });
        if (value.has_value()) tensorboard->AddScalar(step, name, *value, clock());
      }
      break;
    }
  }

  Status WriteFileAtomically(const std::string& relative, std::string_view content) {
    const std::string final_path = Path(relative);
    const std::string tmp_path = final_path + std::string(layout::kTmpSuffix);
    Status status;
    {
      auto file = env->NewWritableFile(tmp_path);
      if (!file.ok()) return file.status();
      status = (*file)->Append(std::as_bytes(std::span(content)));
      Status close_status = (*file)->Close();
      if (status.ok()) status = close_status;
    }
    if (status.ok()) status = env->RenameFile(tmp_path, final_path);
    if (!status.ok()) (void)env->RemoveFile(tmp_path);
    return status;
  }

  CollectionsFile BuildCollectionsFile() const {
    CollectionsFile file;
    file.num_workers = options.num_workers;
    for (const CollectionState& c : collections) {
      CollectionJson json;
      json.name = c.config.name;
      json.include_regex = c.config.include_regex;
      json.tensor_names.assign(c.tensor_names.begin(), c.tensor_names.end());
      json.reduction_config =
          ReductionConfigJson{c.reduction.save_raw_tensor, c.reduction.ReductionsString(),
                              c.reduction.save_shape};
      std::map<Mode, std::optional<ModeSaveConfig>> save_config;
      for (Mode m : kAllModes) {
        const SaveConfigMode& s = c.save_modes[ModeIndex(m)];
        ModeSaveConfig mode_config;
        mode_config.save_interval = s.save_interval;
        mode_config.save_steps = s.save_steps;
        mode_config.start_step = s.start_step;
        if (s.end_step.has_value() && *s.end_step != 0) mode_config.end_step = s.end_step;
        save_config[m] = std::move(mode_config);
      }
      json.save_config = std::move(save_config);
      json.save_histogram = c.config.save_histogram && !c.scalar;
      file.collections.push_back(std::move(json));
    }
    return file;
  }

  Status WriteCollections() {
    const std::string relative = layout::CollectionsFilePath(options.worker);
    const std::string dir = Path(layout::kCollectionsDir);
    Status status = env->CreateDirs(dir);
    if (status.ok()) status = WriteFileAtomically(relative, SerializeCollectionsJson(BuildCollectionsFile()));
    if (!status.ok()) return status.WithContext("writing " + relative);
    collections_written = true;
    collections_stale = false;
    return OkStatus();
  }

  void ResetStep() {
    in_step = false;
    event_rel.clear();
    index.event_file_name.reset();
    index.tensor_payload.clear();  // keeps the capacity for the next step
    index.shape_payload.clear();
    step_error = OkStatus();
  }

  Status EndStep() {
    if (!step_error.ok()) {
      Status error = FailedPreconditionError(Where() + " was not written: " + step_error.ToString());
      ResetStep();
      return error;
    }
    if (index.tensor_payload.empty() && index.shape_payload.empty()) {
      if (tensorboard) tensorboard->EndStep(mode, step);
      ResetStep();
      return OkStatus();
    }
    Status status;
    std::string event_final;
    if (sink.is_open()) {
      event_final = Path(event_rel);
      const std::string event_tmp = event_final + std::string(layout::kTmpSuffix);
      status = sink.Finish();
      if (status.ok()) status = env->RenameFile(event_tmp, event_final);
      if (!status.ok()) {
        (void)env->RemoveFile(event_tmp);
        event_final.clear();
      }
    }
    if (status.ok() && !collections_written) status = WriteCollections();
    if (status.ok()) {
      index.mode = mode;
      index.mode_step = CurrentModeStep();
      if (!event_rel.empty()) index.event_file_name = event_rel;
      const std::string index_dir = Path(layout::IndexFolder(step));
      if (index_dir != created_index_dir) {
        status = env->CreateDirs(index_dir);
        if (status.ok()) created_index_dir = index_dir;
      }
      if (status.ok()) {
        status = WriteFileAtomically(layout::IndexFilePath(step, options.worker),
                                     SerializeIndexJson(index));
      }
    }
    if (!status.ok()) {
      // The index is the commit record: without it the step does not exist for readers, so
      // an already published event file is removed too rather than left orphaned.
      sink.Discard();
      if (!event_final.empty()) (void)env->RemoveFile(event_final);
      status = status.WithContext("publishing " + Where());
    }
    if (tensorboard) {
      // After the trial's files: TensorBoard shows only steps the trial holds.
      if (status.ok()) tensorboard->EndStep(mode, step);
      else tensorboard->DiscardStep();
    }
    ResetStep();
    return status;
  }
};

Writer::Writer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Writer::~Writer() {
  if (impl_ == nullptr || impl_->closed) return;
  std::string message = "Writer for " + impl_->options.worker + " in " + impl_->out_dir +
                        " destroyed without Close()";
  if (impl_->in_step) {
    (void)impl_->Abandon(FailedPreconditionError("destroyed"));
    message += ": discarded the unfinished step " + std::to_string(impl_->step);
  }
  message += "; no end-of-training marker written";
  impl_->Log(LogLevel::kError, message);
}

StatusOr<std::unique_ptr<Writer>> Writer::Open(std::string out_dir, WriterOptions options) {
  if (out_dir.empty()) return InvalidArgumentError("Writer::Open: empty output folder");
  while (out_dir.size() > 1 && out_dir.back() == '/') out_dir.pop_back();
  if (!options.allow_double_underscore_path && out_dir.find("__") != std::string::npos) {
    return InvalidArgumentError(
        "output folder " + out_dir +
        " contains \"__\": smdebug's reader would mangle worker names there (set "
        "WriterOptions::allow_double_underscore_path to write anyway)");
  }
  LITMUS_RETURN_IF_ERROR(layout::ValidateWorkerName(options.worker));
  if (options.num_workers < 1) {
    return InvalidArgumentError("WriterOptions.num_workers must be >= 1, got " +
                                std::to_string(options.num_workers));
  }
  if (options.write_buffer_bytes == 0) {
    return InvalidArgumentError("WriterOptions.write_buffer_bytes must be > 0");
  }
  for (const auto& [mode, config] : options.save_config.modes) {
    LITMUS_RETURN_IF_ERROR(config.Validate().WithContext("WriterOptions.save_config"));
  }
  LITMUS_RETURN_IF_ERROR(options.reduction_config.Validate().WithContext("WriterOptions"));

  Env* env = options.env != nullptr ? options.env : Env::Default();
  auto impl = std::make_unique<Impl>(out_dir, options, env);
  impl->log = options.log ? options.log : LogFunction(LogToStderr);
  impl->clock = options.wall_clock ? options.wall_clock : std::function<double()>(SystemWallTime);

  std::array<SaveConfigMode, 4> default_modes;
  for (Mode m : kAllModes) {
    auto it = options.save_config.modes.find(m);
    default_modes[ModeIndex(m)] = it != options.save_config.modes.end() ? it->second : SaveConfigMode{};
  }
  std::set<std::string, std::less<>> names;
  for (const CollectionConfig& config : options.collections) {
    const std::string where = "collection '" + config.name + "'";
    if (config.name.empty()) return InvalidArgumentError("a collection has an empty name");
    if (!names.insert(config.name).second) {
      return InvalidArgumentError(where + " is configured twice");
    }
    const bool builtin_empty_ok =
        config.name == collections::kAll || config.name == collections::kDefault;
    if (!builtin_empty_ok && config.include_regex.empty() && config.tensor_names.empty()) {
      return InvalidArgumentError(where + " has neither include_regex nor tensor_names");
    }
    CollectionState state;
    state.config = config;
    state.scalar = IsScalarCollection(config.name);
    state.skipped_in_eval_predict = config.name == collections::kGradients ||
                                    config.name == collections::kOptimizerVariables;
    state.save_modes = default_modes;
    if (config.save_config.has_value()) {
      for (const auto& [mode, mode_config] : config.save_config->modes) {
        LITMUS_RETURN_IF_ERROR(mode_config.Validate().WithContext(where));
        state.save_modes[ModeIndex(mode)] = mode_config;
      }
    }
    // smdebug forces raw-only for scalar collections (NON_REDUCTION_COLLECTIONS).
    if (state.scalar) {
      state.reduction = ReductionConfig{};
    } else {
      state.reduction = config.reduction_config.value_or(options.reduction_config);
    }
    LITMUS_RETURN_IF_ERROR(state.reduction.Validate().WithContext(where));
    for (const std::string& name : config.tensor_names) {
      LITMUS_RETURN_IF_ERROR(layout::ValidateTensorName(name).WithContext(where));
      state.tensor_names.insert(name);
    }
    for (const std::string& pattern : config.include_regex) {
      try {
        state.regexes.emplace_back(pattern, std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error& e) {
        return InvalidArgumentError(where + ": include_regex '" + pattern +
                                    "' is not a valid ECMAScript regex: " + e.what());
      }
    }
    if (config.name == collections::kDefault) impl->default_collection = impl->collections.size();
    impl->collections.push_back(std::move(state));
  }
  impl->due.assign(impl->collections.size(), false);

  // Refuse a folder that already holds a trial of this worker, or a finished one.
  auto is_dir = env->IsDirectory(out_dir);
  if (is_dir.ok() && *is_dir) {
    const std::string marker = impl->Path(layout::kEndOfJobFile);
    LITMUS_ASSIGN_OR_RETURN(bool has_marker, env->FileExists(marker));
    std::string existing;
    if (has_marker) existing = std::string(layout::kEndOfJobFile);
    LITMUS_ASSIGN_OR_RETURN(bool has_collections,
                            env->FileExists(impl->Path(layout::CollectionsFilePath(options.worker))));
    if (existing.empty() && has_collections) existing = layout::CollectionsFilePath(options.worker);
    if (existing.empty()) {
      std::vector<FileEntry> files;
      Status listed = env->ListFiles(impl->Path(layout::kIndexDir), "", &files);
      if (!listed.ok() && listed.code() != StatusCode::kNotFound) return listed;
      for (const FileEntry& f : files) {
        const std::string relative = std::string(layout::kIndexDir) + "/" + f.path;
        auto parsed = layout::ParseIndexFilePath(relative);
        if (parsed.has_value() && parsed->worker == options.worker) {
          existing = relative;
          break;
        }
      }
    }
    if (!existing.empty()) {
      if (!options.overwrite_existing) {
        return AlreadyExistsError(out_dir + " already holds a trial (" + existing +
                                  "); set WriterOptions::overwrite_existing to write into it");
      }
      if (has_marker) LITMUS_RETURN_IF_ERROR(env->RemoveFile(marker));
    }
  }
  // The TensorBoard folder is checked (and created) before the output folder is, so that a
  // refused Open creates nothing.
  if (options.export_tensorboard || !options.tensorboard_dir.empty()) {
    std::string dir = options.tensorboard_dir.empty() ? impl->Path("tensorboard") : options.tensorboard_dir;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    LITMUS_ASSIGN_OR_RETURN(impl->tensorboard,
                            internal::TensorBoardExport::Open(env, dir, options.worker,
                                                              options.overwrite_existing, impl->log));
    impl->tensorboard_dir = std::move(dir);
  }
  LITMUS_RETURN_IF_ERROR(env->CreateDirs(out_dir).WithContext("creating the output folder"));
  return std::unique_ptr<Writer>(new Writer(std::move(impl)));
}

Status Writer::SetMode(Mode mode) {
  Impl& w = *impl_;
  if (w.closed) return FailedPreconditionError("writer for " + w.options.worker + " is closed");
  if (ModeFromValue(static_cast<int64_t>(mode)) != mode) {
    return InvalidArgumentError("invalid mode " + std::to_string(static_cast<int32_t>(mode)));
  }
  if (w.in_step) {
    return FailedPreconditionError("SetMode inside " + w.Where() + ": call it between steps");
  }
  w.mode = mode;
  auto& counter = w.mode_steps[ModeIndex(mode)];
  if (!counter.has_value()) counter = -1;
  return OkStatus();
}

Status Writer::BeginStep() {
  Impl& w = *impl_;
  if (w.closed) return FailedPreconditionError("writer for " + w.options.worker + " is closed");
  if (w.in_step) return FailedPreconditionError(w.Where() + " is still open (call EndStep())");
  if (w.step >= layout::kMaxStep) {
    return OutOfRangeError("global step would exceed " + std::to_string(layout::kMaxStep));
  }
  ++w.step;
  auto& counter = w.mode_steps[ModeIndex(w.mode)];
  counter = counter.value_or(-1) + 1;
  if (w.mode != Mode::kGlobal) w.mode_steps[ModeIndex(Mode::kGlobal)] = w.step;
  const int64_t mode_step = *counter;
  const bool eval_or_predict = w.mode == Mode::kEval || w.mode == Mode::kPredict;
  for (size_t i = 0; i < w.collections.size(); ++i) {
    const CollectionState& c = w.collections[i];
    w.due[i] = !(eval_or_predict && c.skipped_in_eval_predict) &&
               c.save_modes[ModeIndex(w.mode)].ShouldSaveStep(mode_step);
  }
  w.in_step = true;
  return OkStatus();
}

Status Writer::EndStep() {
  Impl& w = *impl_;
  if (w.closed) return FailedPreconditionError("writer for " + w.options.worker + " is closed");
  if (!w.in_step) return FailedPreconditionError("EndStep() without BeginStep()");
  return w.EndStep();
}

bool Writer::ShouldSave(std::string_view name) {
  Impl& w = *impl_;
  if (w.closed || !w.in_step || !layout::ValidateTensorName(name).ok()) return false;
  return w.AnyDue(w.Matched(name));
}

Status Writer::SaveTensor(std::string_view name, std::span<const std::byte> data,
                          std::span<const int64_t> shape, DType dtype) {
  Impl& w = *impl_;
  LITMUS_RETURN_IF_ERROR(w.CheckWritable());
  LITMUS_RETURN_IF_ERROR(layout::ValidateTensorName(name));
  const auto what = [name] { return "tensor " + std::string(name); };
  if (IsString(dtype)) {
    return InvalidArgumentError(what() + ": string tensors are saved with SaveStrings()");
  }
  if (!DTypeFromProto(static_cast<int32_t>(dtype)).has_value() || DTypeSize(dtype) == 0) {
    return UnimplementedError(what() + ": unsupported dtype " +
                              std::to_string(static_cast<int32_t>(dtype)));
  }
  if (!SmdebugReadsDType(dtype) && !w.options.allow_dtypes_smdebug_cannot_read) {
    return InvalidArgumentError(
        what() + ": smdebug 1.0.34 cannot read dtype " + std::string(DTypeName(dtype)) +
        " back; set WriterOptions::allow_dtypes_smdebug_cannot_read to write it anyway");
  }
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) return InvalidArgumentError(what() + ": negative dimension in shape " + ShapeString(shape));
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d) {
      return InvalidArgumentError(what() + ": shape " + ShapeString(shape) + " is too large");
    }
    count *= d;
  }
  if (count == 0) {
    return InvalidArgumentError(what() + ": zero-element tensors (shape " + ShapeString(shape) +
                                ") are not written (smdebug cannot read them back)");
  }
  const size_t item = DTypeSize(dtype);
  if (static_cast<uint64_t>(count) > std::numeric_limits<uint64_t>::max() / item ||
      data.size() != static_cast<uint64_t>(count) * item) {
    return InvalidArgumentError(what() + ": shape " + ShapeString(shape) + " of " +
                                std::string(DTypeName(dtype)) + " needs " +
                                std::to_string(static_cast<uint64_t>(count) * item) +
                                " bytes, got " + std::to_string(data.size()));
  }
  if (dtype == DType::kBool) {
    for (std::byte b : data) {
      if (b != std::byte{0} && b != std::byte{1}) {
        return InvalidArgumentError(what() + ": bool elements must be bytes 0 or 1");
      }
    }
  }
  return w.SaveValidated(name, dtype, shape, count, data, {});
}

Status Writer::SaveStrings(std::string_view name, std::span<const std::string> values) {
  Impl& w = *impl_;
  LITMUS_RETURN_IF_ERROR(w.CheckWritable());
  LITMUS_RETURN_IF_ERROR(layout::ValidateTensorName(name));
  if (values.empty()) {
    return InvalidArgumentError("tensor " + std::string(name) +
                                ": zero-element tensors are not written");
  }
  std::vector<std::string_view> views(values.begin(), values.end());
  const std::array<int64_t, 1> shape = {static_cast<int64_t>(values.size())};
  return w.SaveValidated(name, DType::kInvalid, shape, shape[0], {}, views);
}

Status Writer::SaveScalar(std::string_view name, double value) {
  Impl& w = *impl_;
  LITMUS_RETURN_IF_ERROR(w.CheckWritable());
  const std::string full = std::string(kScalarPrefix) + std::string(name);
  LITMUS_RETURN_IF_ERROR(layout::ValidateTensorName(full));
  // Scalars belong to no collection: Info(), not Matched().
  auto& info = w.Info(full);
  if (info.saved_at_step == w.step) {
    return InvalidArgumentError("scalar " + full + " was already saved at " + w.Where());
  }
  info.saved_at_step = w.step;
  const std::array<int64_t, 1> shape = {1};
  LITMUS_RETURN_IF_ERROR(w.AppendRecord(full, DType::kFloat64, shape, std::as_bytes(std::span(&value, 1)), {}));
  // smdebug's save_scalar also writes a TensorBoard scalar (write_tb), at the global step.
  if (w.tensorboard) w.tensorboard->AddScalar(w.step, full, value, w.clock());
  return OkStatus();
}

Status Writer::Close() {
  Impl& w = *impl_;
  if (w.closed) return FailedPreconditionError("writer for " + w.options.worker + " is already closed");
  Status status;
  if (w.in_step) status = w.EndStep();
  // Written if it never was, and again (replacing it atomically) if tensors first seen after
  // the first step joined a collection: smdebug exports it only once, so its readers may miss
  // them in tensor_names (they still match through include_regex).
  if (!w.collections_written || w.collections_stale) {
    Status s = w.WriteCollections();
    if (status.ok()) status = s;
  }
  w.closed = true;
  bool write_marker = false;
  switch (w.options.end_marker) {
    case EndMarkerPolicy::kSingleWorker: write_marker = w.options.num_workers == 1; break;
    case EndMarkerPolicy::kEveryWorker: write_marker = true; break;
    case EndMarkerPolicy::kNever: write_marker = false; break;
  }
  if (write_marker && w.options.skip_end_marker_if_training_job_name_set &&
      std::getenv("TRAINING_JOB_NAME") != nullptr) {
    write_marker = false;
  }
  // Without a collections file readers could not open the trial; an end marker would then make
  // smdebug raise MissingCollectionFiles instead of waiting.
  if (write_marker && w.collections_written) {
    Status s = MarkTrainingEnded(w.env, w.out_dir);
    if (status.ok()) status = s;
  }
  return status;
}

const std::string& Writer::out_dir() const { return impl_->out_dir; }
const std::string& Writer::tensorboard_dir() const { return impl_->tensorboard_dir; }
const std::string& Writer::worker() const { return impl_->options.worker; }
bool Writer::closed() const { return impl_->closed; }
bool Writer::in_step() const { return impl_->in_step; }
int64_t Writer::step() const { return impl_->step; }
Mode Writer::mode() const { return impl_->mode; }
int64_t Writer::mode_step() const { return impl_->CurrentModeStep(); }
int64_t Writer::mode_step(Mode mode) const {
  return impl_->mode_steps[ModeIndex(mode)].value_or(-1);
}

Status MarkTrainingEnded(Env* env, const std::string& out_dir) {
  if (env == nullptr) env = Env::Default();
  const std::string final_path = Env::JoinPath(out_dir, layout::kEndOfJobFile);
  const std::string tmp_path = final_path + std::string(layout::kTmpSuffix);
  Status status;
  {
    auto file = env->NewWritableFile(tmp_path);
    if (!file.ok()) return file.status().WithContext("writing the end-of-training marker");
    status = (*file)->Close();
  }
  if (status.ok()) status = env->RenameFile(tmp_path, final_path);
  if (!status.ok()) {
    (void)env->RemoveFile(tmp_path);
    return status.WithContext("writing the end-of-training marker");
  }
  return OkStatus();
}

}  // namespace litmus::writer
