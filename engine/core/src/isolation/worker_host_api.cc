// The worker's host table (see worker_host_api.h). Every function is noexcept with its body in a
// catch-all, as the runner's: an exception never unwinds into plugin code.
// Thread-safety: one plugin call at a time.
#include "isolation/worker_host_api.h"

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <tuple>

#include "isolation/tensor_table.h"

namespace litmus::isolation {
namespace {

WorkerConnection* g_connection = nullptr;

// Exit status of a worker that lost its runner mid-call (the runner is gone or ended the rule).
constexpr int kExitLostRunner = 70;

litmus_status_t Fail(litmus_ctx_t* ctx, litmus_status_t status, std::string_view message) noexcept {
  try {
    ctx->error.assign(message.data(), message.size());
    ctx->has_error = true;
  } catch (...) {
    ctx->error.clear();
    ctx->has_error = false;
  }
  return status;
}

template <class Body>
litmus_status_t Guarded(litmus_ctx_t* ctx, Body&& body) noexcept {
  if (ctx == nullptr) return LITMUS_INVALID_ARGUMENT;
  try {
    return body();
  } catch (const std::bad_alloc&) {
    g_connection->out_of_memory = true;
    return Fail(ctx, LITMUS_INTERNAL, "out of memory in host function");
  } catch (...) {
    return Fail(ctx, LITMUS_INTERNAL, "internal error in host function (rule worker)");
  }
}

// Passes a runner's answer on: its error text (if it recorded one) and status.
litmus_status_t Apply(litmus_ctx_t* ctx, const QueryAnswer& answer) {
  if (answer.has_error) Fail(ctx, LITMUS_OK, answer.error);
  return answer.status;
}

litmus_status_t NullOutput(litmus_ctx_t* ctx, const char* function) {
  return Fail(ctx, LITMUS_INVALID_ARGUMENT, std::string(function) + ": an output pointer is NULL");
}

std::string Args(HostFunction f, const Encoder& e) {
  std::string key(sizeof(uint32_t), '\0');
  const uint32_t id = static_cast<uint32_t>(f);
  std::memcpy(key.data(), &id, sizeof(id));
  return key + e.bytes();
}

// Answers whose payload is a list of int64 (steps) or strings (names) are decoded once.
void DecodeInts(const QueryAnswer& a) {
  if (!a.ints.empty() || a.status != LITMUS_OK) return;
  Decoder in(a.payload);
  const_cast<QueryAnswer&>(a).ints = in.GetVector<int64_t>();
}

void DecodeStrings(const QueryAnswer& a) {
  QueryAnswer& m = const_cast<QueryAnswer&>(a);
  if (!m.strs.empty() || m.status != LITMUS_OK) return;
  Decoder in(m.payload);
  const uint64_t count = in.Get<uint64_t>();
  for (uint64_t i = 0; i < count && !in.failed(); ++i) {
    const std::string_view s = in.GetBytes();
    m.strs.push_back({s.data(), s.size()});  // views into the payload, which the answer keeps
  }
}

void HostSetError(litmus_ctx_t* ctx, const char* message, size_t size) noexcept {
  if (ctx == nullptr || message == nullptr || size == 0) return;
  Fail(ctx, LITMUS_OK, std::string_view(message, size));
}

void HostLog(litmus_ctx_t* ctx, int32_t level, const char* message, size_t size) noexcept {
  if (ctx == nullptr || (message == nullptr && size > 0)) return;
  if (level < g_connection->log_level && level <= LITMUS_LOG_ERROR) return;
  try {
    Encoder e;
    e.Put<int32_t>(level).PutBytes(message, size);
    g_connection->Note(MessageType::kLog, e.bytes());
  } catch (...) {
  }
}

void* HostAlloc(size_t size) noexcept { return std::malloc(size == 0 ? 1 : size); }
void HostFree(void* pointer) noexcept { std::free(pointer); }

uint32_t HostTrialCount(litmus_ctx_t* ctx) noexcept {
  return ctx == nullptr ? 0 : g_connection->trial_count();
}

litmus_status_t HostSteps(litmus_ctx_t* ctx, uint32_t trial, int32_t mode, const int64_t** steps,
                          size_t* count) noexcept {
  return Guarded(ctx, [&]() -> litmus_status_t {
    if (steps == nullptr || count == nullptr) return NullOutput(ctx, "steps");
    Encoder e;
    e.Put(trial).Put(mode);
    const QueryAnswer& a = g_connection->Query(HostFunction::kSteps, Args(HostFunction::kSteps, e), true);
    DecodeInts(a);
    *steps = a.ints.empty() ? nullptr : a.ints.data();
    *count = a.ints.size();
    return Apply(ctx, a);
  });
}

litmus_status_t HostStepMode(litmus_ctx_t* ctx, uint32_t trial, int64_t step, int32_t* mode,
                             int64_t* mode_step) noexcept {
  return Guarded(ctx, [&]() -> litmus_status_t {
    if (mode == nullptr || mode_step == nullptr) return NullOutput(ctx, "step_mode");
    Encoder e;
    e.Put(trial).Put(step);
    const QueryAnswer& a = g_connection->Query(HostFunction::kStepMode, Args(HostFunction::kStepMode, e), true);
    if (a.status == LITMUS_OK) {
      Decoder in(a.payload);
      *mode = in.Get<int32_t>();
      *mode_step = in.Get<int64_t>();
    }
    return Apply(ctx, a);
  });
}

litmus_status_t HostGlobalStep(litmus_ctx_t* ctx, uint32_t trial, int32_t mode, int64_t mode_step,
                               int64_t* step) noexcept {
  return Guarded(ctx, [&]() -> litmus_status_t {
    if (step == nullptr) return NullOutput(ctx, "global_step");
    Encoder e;
    e.Put(trial).Put(mode).Put(mode_step);
    const QueryAnswer& a = g_connection->Query(HostFunction::kGlobalStep, Args(HostFunction::kGlobalStep, e), true);
    if (a.status == LITMUS_OK) *step = Decoder(a.payload).Get<int64_t>();
    return Apply(ctx, a);
  });
}

litmus_status_t HostWorkers(litmus_ctx_t* ctx, uint32_t trial, const litmus_str_t** workers, size_t* count) noexcept {
  return Guarded(ctx, [&]() -> litmus_status_t {
    if (workers == nullptr || count == nullptr) return NullOutput(ctx, "workers");
    Encoder e;
    e.Put(trial);
    const QueryAnswer& a = g_connection->Query(HostFunction::kWorkers, Args(HostFunction::kWorkers, e), true);
    DecodeStrings(a);
    *workers = a.strs.empty() ? nullptr : a.strs.data();
    *count = a.strs.size();
    return Apply(ctx, a);
  });
}

#define LITMUS_QUERY_HAS(query, field) \
  ((query)->struct_size >= offsetof(litmus_tensor_query_t, field) + sizeof(litmus_tensor_query_t::field))

litmus_status_t HostTensorNames(litmus_ctx_t* ctx, uint32_t trial, const litmus_tensor_query_t* query,
                                const litmus_str_t** names, size_t* count) noexcept {
  return Guarded(ctx, [&]() -> litmus_status_t {
    if (names == nullptr || count == nullptr) return NullOutput(ctx, "tensor_names");
    // The fields the plugin's struct has; the rest does not filter (as the runner's host).
    litmus_tensor_query_t q{};
    q.step = -1;
    if (query != nullptr) {
      if (LITMUS_QUERY_HAS(query, collection)) q.collection = query->collection;
      if (LITMUS_QUERY_HAS(query, regex)) q.regex = query->regex;
      if (LITMUS_QUERY_HAS(query, step)) q.step = query->step;
      if (LITMUS_QUERY_HAS(query, mode)) q.mode = query->mode;
    }
    Encoder e;
    e.Put(trial);
    PutStr(e, q.collection);
    PutStr(e, q.regex);
    e.Put(q.step).Put(q.mode);
    const QueryAnswer& a = g_connection->Query(HostFunction::kTensorNames, Args(HostFunction::kTensorNames, e), true);
    DecodeStrings(a);
    // Every name listed is saved: require_tensor of it needs no query. (Taken while the known
    // set is smaller than the list, so that a rule listing its tensors at each step pays for it
    // once: a rule requiring each of 10k listed tensors asked about each, a round trip apiece.)
    if (a.status == LITMUS_OK && trial < g_connection->trial_count() &&
        g_connection->saved_names[trial].size() < a.strs.size()) {
      for (const litmus_str_t& s : a.strs) g_connection->saved_names[trial].emplace(s.size == 0 ? "" : s.data, s.size);
    }
    *names = a.strs.empty() ? nullptr : a.strs.data();
    *count = a.strs.size();
    return Apply(ctx, a);
  });
}
#undef LITMUS_QUERY_HAS

litmus_status_t HostTensorSteps(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int32_t mode,
                                const int64_t** steps, size_t* count) noexcept {
  return Guarded(ctx, [&]() -> litmus_status_t {
    if (steps == nullptr || count == nullptr) return NullOutput(ctx, "tensor_steps");
    Encoder e;
    e.Put(trial);
    PutStr(e, name);
    e.Put(mode);
    const QueryAnswer& a = g_connection->Query(HostFunction::kTensorSteps, Args(HostFunction::kTensorSteps, e), true);
    DecodeInts(a);
    *steps = a.ints.empty() ? nullptr : a.ints.data();
    *count = a.ints.size();
    return Apply(ctx, a);
  });
}

// The local table serves the default worker at a global step only.
const LocalTensor* Local(uint32_t trial, litmus_str_t name, int64_t step, int32_t mode, litmus_str_t worker) {
  if (mode != LITMUS_MODE_GLOBAL || worker.size != 0 || (name.data == nullptr && name.size > 0)) return nullptr;
  return g_connection->FindLocal(trial, std::string_view(name.size == 0 ? "" : name.data, name.size), step);
}

void FillView(litmus_tensor_view_t* out, const litmus_tensor_view_t& view) {
  litmus_tensor_view_t copy = view;
  const uint32_t filled = std::min<uint32_t>(out->struct_size, sizeof(copy));
  copy.struct_size = filled;
  std::memcpy(out, &copy, filled);
}

litmus_status_t HostTensorValue(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int64_t step, int32_t mode,
                                litmus_str_t worker, litmus_tensor_view_t* out) noexcept {
  return Guarded(ctx, [&]() -> litmus_status_t {
    if (out == nullptr) return NullOutput(ctx, "tensor_value");
    if (out->struct_size >= sizeof(uint32_t)) {
      // (A summary's data is with the runner only: asked for below.)
      if (const LocalTensor* t = Local(trial, name, step, mode, worker); t != nullptr && !t->summary_only) {
        litmus_tensor_view_t view{};
        view.dtype = t->dtype;
        view.data = t->bytes == 0 ? nullptr : t->data;
        view.byte_size = t->bytes;
        view.shape = t->shape;
        view.rank = t->rank;
        view.num_elements = t->num_elements;
        view.step = t->step;
        view.mode = t->mode;
        view.mode_step = t->mode_step;
        FillView(out, view);
        return LITMUS_OK;
      }
    }
    Encoder e;
    e.Put(trial);
    PutStr(e, name);
    e.Put(step).Put(mode);
    PutStr(e, worker);
    e.Put<uint32_t>(out->struct_size);
    const QueryAnswer& a = g_connection->Query(HostFunction::kTensorValue, Args(HostFunction::kTensorValue, e), false);
    if (a.status != LITMUS_OK) return Apply(ctx, a);
    // Payload: dtype, kind (0 no data, 1 shared memory offset, 2 bytes), data, shape,
    // num_elements, strings, step, mode, mode_step.
    QueryAnswer& m = const_cast<QueryAnswer&>(a);
    Decoder in(m.payload);
    litmus_tensor_view_t view{};
    view.dtype = in.Get<int32_t>();
    const uint8_t kind = in.Get<uint8_t>();
    if (kind == 1) {
      const uint64_t offset = in.Get<uint64_t>();
      view.byte_size = in.Get<uint64_t>();
      view.data = g_connection->ArenaAt(offset, view.byte_size);
      if (view.data == nullptr) return Fail(ctx, LITMUS_INTERNAL, "tensor_value: the runner sent a value outside the shared memory");
    } else if (kind == 2) {
      const std::string_view bytes = in.GetBytes();
      m.aligned.reset(new std::byte[bytes.size() == 0 ? 1 : bytes.size()]);
      if (!bytes.empty()) std::memcpy(m.aligned.get(), bytes.data(), bytes.size());
      view.data = m.aligned.get();
      view.byte_size = bytes.size();
    }
    m.ints = in.GetVector<int64_t>();
    view.shape = m.ints.empty() ? nullptr : m.ints.data();
    view.rank = static_cast<uint32_t>(m.ints.size());
    view.num_elements = in.Get<int64_t>();
    const uint64_t strings = in.Get<uint64_t>();
    for (uint64_t i = 0; i < strings && !in.failed(); ++i) {
      const std::string_view s = in.GetBytes();
      m.strs.push_back({s.data(), s.size()});
    }
    if (kind == 0 && !m.strs.empty()) view.strings = m.strs.data();
    view.step = in.Get<int64_t>();
    view.mode = in.Get<int32_t>();
    view.mode_step = in.Get<int64_t>();
    if (in.failed()) return Fail(ctx, LITMUS_INTERNAL, "tensor_value: malformed answer from the runner");
    FillView(out, view);
    return Apply(ctx, a);
  });
}

litmus_status_t HostTensorReduction(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int64_t step, int32_t mode,
                                    int32_t reduction, uint32_t abs, litmus_str_t worker, double* out) noexcept {
  return Guarded(ctx, [&]() -> litmus_status_t {
    if (out == nullptr) return NullOutput(ctx, "tensor_reduction");
    if (reduction >= 0 && reduction <= LITMUS_REDUCTION_L2) {
      if (const LocalTensor* t = Local(trial, name, step, mode, worker)) {
        const uint32_t key = ReductionMemoKey(static_cast<layout::Reduction>(reduction), abs != 0);
        if ((t->memo_mask >> key & 1) != 0) {
          *out = t->memos[key];
          return LITMUS_OK;
        }
      }
    }
    Encoder e;
    e.Put(trial);
    PutStr(e, name);
    e.Put(step).Put(mode).Put(reduction).Put(abs);
    PutStr(e, worker);
    const QueryAnswer& a =
        g_connection->Query(HostFunction::kTensorReduction, Args(HostFunction::kTensorReduction, e), false);
    if (a.status == LITMUS_OK) *out = Decoder(a.payload).Get<double>();
    return Apply(ctx, a);
  });
}

litmus_status_t HostTensorShape(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int64_t step, int32_t mode,
                                litmus_str_t worker, const int64_t** shape, uint32_t* rank) noexcept {
  return Guarded(ctx, [&]() -> litmus_status_t {
    if (shape == nullptr || rank == nullptr) return NullOutput(ctx, "tensor_shape");
    Encoder e;
    e.Put(trial);
    PutStr(e, name);
    e.Put(step).Put(mode);
    PutStr(e, worker);
    const QueryAnswer& a = g_connection->Query(HostFunction::kTensorShape, Args(HostFunction::kTensorShape, e), false);
    DecodeInts(a);
    *shape = a.ints.empty() ? nullptr : a.ints.data();
    *rank = static_cast<uint32_t>(a.ints.size());
    return Apply(ctx, a);
  });
}

// require_tensor and require_tensor_ex (ABI 1.2): `function` names the one called.
litmus_status_t RequireTensor(const char* function, litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name,
                              const int64_t* steps, size_t step_count, uint32_t flags) noexcept {
  return Guarded(ctx, [&]() -> litmus_status_t {
    const uint32_t should_match_regex = (flags & LITMUS_REQUIRE_REGEX) != 0 ? 1u : 0u;
    const bool reductions_only = (flags & LITMUS_REQUIRE_REDUCTIONS_ONLY) != 0;
    if ((flags & ~(LITMUS_REQUIRE_REGEX | LITMUS_REQUIRE_REDUCTIONS_ONLY)) != 0) {
      return Fail(ctx, LITMUS_INVALID_ARGUMENT, std::string(function) + ": unknown flags " + std::to_string(flags));
    }
    if (ctx->phase != PluginCallPhase::kSetRequiredTensors || ctx->requirements == nullptr) {
      return Fail(ctx, LITMUS_INVALID_ARGUMENT, std::string(function) + " is only valid inside set_required_tensors");
    }
    if (steps == nullptr && step_count > 0) {
      return Fail(ctx, LITMUS_INVALID_ARGUMENT,
                  std::string(function) + ": steps is NULL but step_count is " + std::to_string(step_count));
    }
    // A name already known to be saved needs no query (rules require the same names every step).
    if (should_match_regex == 0 && name.data != nullptr && trial < g_connection->trial_count()) {
      const std::string_view wanted(name.data, name.size);
      auto& by_position = g_connection->saved_at_position;
      const size_t position = ctx->requirements->size();  // (where a new name goes)
      // (Positions before one recorded are null until a name is recorded there.)
      if (position < by_position.size() && by_position[position].second != nullptr &&
          by_position[position].first == trial && *by_position[position].second == wanted) {
        RecordRequirement(ctx, trial, *by_position[position].second, steps, step_count, reductions_only);
        return LITMUS_OK;
      }
      const auto& saved = g_connection->saved_names[trial];
      if (const auto it = saved.find(wanted); it != saved.end()) {
        RecordRequirement(ctx, trial, *it, steps, step_count, reductions_only);
        if (ctx->requirements->size() > position) {  // (a new entry, at `position`)
          if (by_position.size() <= position) by_position.resize(position + 1);
          by_position[position] = {trial, &*it};
        }
        return LITMUS_OK;
      }
    }
    Encoder e;
    e.Put(trial);
    PutStr(e, name);
    e.Put(should_match_regex);
    const QueryAnswer& a =
        g_connection->Query(HostFunction::kRequireTensor, Args(HostFunction::kRequireTensor, e), true);
    if (a.status != LITMUS_OK) return Apply(ctx, a);
    DecodeStrings(a);
    for (const litmus_str_t& s : a.strs) {
      if (trial >= g_connection->trial_count()) continue;  // (the runner refused such a trial)
      const auto kept = g_connection->saved_names[trial].emplace(s.size == 0 ? "" : s.data, s.size).first;
      RecordRequirement(ctx, trial, *kept, steps, step_count, reductions_only);
    }
    return Apply(ctx, a);
  });
}

litmus_status_t HostRequireTensor(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, const int64_t* steps,
                                  size_t step_count, uint32_t should_match_regex) noexcept {
  return RequireTensor("require_tensor", ctx, trial, name, steps, step_count,
                       should_match_regex != 0 ? LITMUS_REQUIRE_REGEX : 0u);
}

litmus_status_t HostRequireTensorEx(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, const int64_t* steps,
                                    size_t step_count, uint32_t flags) noexcept {
  return RequireTensor("require_tensor_ex", ctx, trial, name, steps, step_count, flags);
}

void HostReportViolations(litmus_ctx_t* ctx, int64_t count) noexcept {
  if (ctx == nullptr) return;
  try {
    Encoder e;
    e.Put(count);
    g_connection->Note(MessageType::kReportViolations, e.bytes());
  } catch (...) {
  }
}

void HostReportDetail(litmus_ctx_t* ctx, litmus_str_t key, litmus_str_t json_value) noexcept {
  if (ctx == nullptr) return;
  try {
    Encoder e;
    PutStr(e, key);
    PutStr(e, json_value);
    g_connection->Note(MessageType::kReportDetail, e.bytes());
  } catch (...) {
  }
}

// ABI 1.3: forwarded as notes; the runner's host functions check and record them.
void HostReportSeries(litmus_ctx_t* ctx, litmus_str_t series, litmus_str_t tensor, int64_t step,
                      double value) noexcept {
  if (ctx == nullptr || !g_connection->keep_series) return;
  try {
    g_connection->AddSeriesPoint(series, tensor, step, value);
  } catch (...) {
  }
}

void HostReportThreshold(litmus_ctx_t* ctx, litmus_str_t series, double value, int32_t fires_when) noexcept {
  if (ctx == nullptr || !g_connection->keep_series) return;
  try {
    Encoder e;
    PutStr(e, series);
    e.Put(value).Put(fires_when);
    g_connection->Note(MessageType::kReportThreshold, e.bytes());
  } catch (...) {
  }
}

void HostReportRecommendation(litmus_ctx_t* ctx, litmus_str_t text) noexcept {
  if (ctx == nullptr || !g_connection->keep_series) return;
  try {
    Encoder e;
    PutStr(e, text);
    g_connection->Note(MessageType::kReportRecommendation, e.bytes());
  } catch (...) {
  }
}

litmus_status_t HostAddAction(litmus_ctx_t* ctx, litmus_str_t action_json) noexcept {
  return Guarded(ctx, [&]() -> litmus_status_t {
    Encoder e;
    PutStr(e, action_json);
    const QueryAnswer& a = g_connection->Query(HostFunction::kAddAction, Args(HostFunction::kAddAction, e), false);
    if (a.status == LITMUS_OK && action_json.data != nullptr) {
      ctx->added_actions.emplace_back(action_json.data, action_json.size);
    }
    return Apply(ctx, a);
  });
}

constexpr litmus_host_api_t kWorkerHostApi = {
    .struct_size = sizeof(litmus_host_api_t),
    .abi_major = LITMUS_ABI_MAJOR,
    .abi_minor = LITMUS_ABI_MINOR,
    .reserved0 = 0,
    .set_error = HostSetError,
    .log = HostLog,
    .alloc = HostAlloc,
    .free = HostFree,
    .trial_count = HostTrialCount,
    .steps = HostSteps,
    .step_mode = HostStepMode,
    .global_step = HostGlobalStep,
    .workers = HostWorkers,
    .tensor_names = HostTensorNames,
    .tensor_steps = HostTensorSteps,
    .tensor_value = HostTensorValue,
    .tensor_reduction = HostTensorReduction,
    .tensor_shape = HostTensorShape,
    .require_tensor = HostRequireTensor,
    .report_violations = HostReportViolations,
    .report_detail = HostReportDetail,
    .add_action = HostAddAction,
    .require_tensor_ex = HostRequireTensorEx,
    .report_series = HostReportSeries,
    .report_threshold = HostReportThreshold,
    .report_recommendation = HostReportRecommendation,
};

}  // namespace

bool DecodeAnswer(Decoder& in, QueryAnswer* answer) {
  answer->status = in.Get<int32_t>();
  answer->has_error = in.Get<uint8_t>() != 0;
  answer->error = in.GetString();
  answer->payload = std::string(in.GetBytes());
  return !in.failed();
}

void PutStr(Encoder& out, litmus_str_t s) {
  out.Put<uint8_t>(s.data == nullptr ? 1 : 0);
  if (s.data == nullptr) {
    out.Put<uint64_t>(s.size);
  } else {
    out.PutBytes(s.data, s.size);
  }
}

litmus_str_t GetStr(Decoder& in) {
  if (in.Get<uint8_t>() != 0) return {nullptr, static_cast<size_t>(in.Get<uint64_t>())};
  const std::string_view s = in.GetBytes();
  return {s.data(), s.size()};
}

WorkerConnection::WorkerConnection(Channel* channel, std::unique_ptr<ReadOnlyMapping> arena, uint32_t trial_count)
    : saved_names(trial_count), channel_(channel), arena_(std::move(arena)), trial_count_(trial_count) {}

void WorkerConnection::BeginRequest(uint64_t generation) {
  if (generation_ != generation || cache_.size() > kMaxCachedAnswers) cache_.clear();
  generation_ = generation;
  call_answers_.clear();
  local_.clear();
  shapes_.clear();
  for (const uint32_t id : touched_) first_local_[id] = -1;
  touched_.clear();
  next_local_ = 0;
  table_.Close();  // (the runner may reuse its memory once this request is answered)
  from_table_.clear();
}

bool WorkerConnection::ReadLocalTensors(Decoder& in) {
  // The step's table, then new names (id, name), then entries (IsolatedRule::AppendLocalTensors,
  // TensorTable::Append).
  if (in.Get<uint8_t>() != 0) {
    const uint64_t offset = in.Get<uint64_t>();
    const uint64_t size = in.Get<uint64_t>();
    job_trials_ = in.GetVector<uint32_t>();
    if (in.failed() || !table_.Open(*arena_, offset, size)) return false;
    from_table_.reserve(table_.rows());
    slot_of_row_.assign(table_.rows(), -1);
  }
  const uint64_t new_names = in.Get<uint64_t>();
  for (uint64_t i = 0; i < new_names && !in.failed(); ++i) {
    const uint32_t id = in.Get<uint32_t>();
    if (id != names_.size()) return false;
    names_.emplace_back(in.GetBytes());
    name_ids_.emplace(names_.back(), id);
    first_local_.push_back(-1);
  }
  const uint64_t count = in.Get<uint64_t>();
  local_.reserve(static_cast<size_t>(std::min<uint64_t>(count, 1 << 20)));
  std::vector<size_t> shape_at;
  shape_at.reserve(local_.capacity());
  for (uint64_t i = 0; i < count && !in.failed(); ++i) {
    LocalTensor t;
    const uint32_t id = in.Get<uint32_t>();
    t.trial = in.Get<uint32_t>();
    t.step = in.Get<int64_t>();
    const uint64_t offset = in.Get<uint64_t>();
    t.bytes = in.Get<uint64_t>();
    t.dtype = in.Get<int32_t>();
    const std::string_view shape = in.GetBytes();
    if (shape.size() % sizeof(int64_t) != 0) return false;
    t.rank = static_cast<uint32_t>(shape.size() / sizeof(int64_t));
    shape_at.push_back(shapes_.size());
    shapes_.resize(shapes_.size() + t.rank);
    if (t.rank > 0) std::memcpy(shapes_.data() + shape_at.back(), shape.data(), shape.size());
    t.num_elements = in.Get<int64_t>();
    t.mode = in.Get<int32_t>();
    t.mode_step = in.Get<int64_t>();
    t.memo_mask = in.Get<uint32_t>();
    for (uint32_t key = 0; key < t.memos.size(); ++key) {
      if ((t.memo_mask >> key & 1) != 0) t.memos[key] = in.Get<double>();
    }
    t.data = arena_->At(offset, t.bytes);
    if (id >= names_.size() || t.data == nullptr) return false;
    // Chained by name (the plugin asks by name).
    t.name_id = id;
    t.next = first_local_[id];
    if (t.next < 0) touched_.push_back(id);
    first_local_[id] = static_cast<int32_t>(local_.size());
    local_.push_back(t);
  }
  // (shapes_ is complete: the pointers into it stay valid for the call.)
  for (size_t i = 0; i < local_.size(); ++i) local_[i].shape = local_[i].rank == 0 ? nullptr : shapes_.data() + shape_at[i];
  return !in.failed();
}

const LocalTensor* WorkerConnection::FindLocal(uint32_t trial, std::string_view name, int64_t step) {
  if (local_.empty()) return FindInTable(trial, name, step);
  if (next_local_ < local_.size()) {
    const LocalTensor& t = local_[next_local_];
    if (t.trial == trial && t.step == step && names_[t.name_id] == name) {
      ++next_local_;
      return &t;
    }
  }
  const auto id = name_ids_.find(name);
  if (id == name_ids_.end()) return FindInTable(trial, name, step);
  for (int32_t i = first_local_[id->second]; i >= 0; i = local_[static_cast<size_t>(i)].next) {
    const LocalTensor& t = local_[static_cast<size_t>(i)];
    if (t.trial == trial && t.step == step) {
      next_local_ = static_cast<size_t>(i) + 1;
      return &t;
    }
  }
  return FindInTable(trial, name, step);
}

static_assert(std::tuple_size_v<decltype(LocalTensor::memos)> == kMemoKeys);

const LocalTensor* WorkerConnection::FindInTable(uint32_t trial, std::string_view name, int64_t step) {
  if (trial >= job_trials_.size()) return nullptr;
  const int64_t index = table_.Find(job_trials_[trial], name, step);
  if (index < 0) return nullptr;
  int32_t& slot = slot_of_row_[static_cast<size_t>(index)];
  if (slot >= 0) return &from_table_[static_cast<size_t>(slot)];
  slot = static_cast<int32_t>(from_table_.size());
  const StepTableRow* row = &table_.Row(static_cast<size_t>(index));
  LocalTensor& t = from_table_.emplace_back();
  t.trial = trial;
  t.step = row->step;
  t.summary_only = row->data_offset == kSummaryOnly;
  t.data = t.summary_only ? nullptr : arena_->At(row->data_offset, row->data_bytes);
  t.bytes = row->data_bytes;
  t.dtype = row->dtype;
  t.shape = table_.Shape(*row);
  t.rank = row->rank;
  t.num_elements = row->num_elements;
  t.mode = row->mode;
  t.mode_step = row->mode_step;
  t.memo_mask = row->memo_mask;
  const double* memo = table_.Memos(*row);
  for (uint32_t key = 0; key < t.memos.size(); ++key) {
    if ((t.memo_mask >> key & 1) != 0) t.memos[key] = *memo++;
  }
  return &t;
}

bool WorkerConnection::ReadAnswersAhead(Decoder& in) {
  const uint64_t count = in.Get<uint64_t>();
  for (uint64_t i = 0; i < count && !in.failed(); ++i) {
    const std::string_view args = in.GetBytes();
    Decoder answer_in(in.GetBytes());
    QueryAnswer answer;
    if (!DecodeAnswer(answer_in, &answer)) return false;
    if (cache_.find(args) == cache_.end()) cache_.emplace(std::string(args), std::move(answer));
  }
  return !in.failed();
}

const QueryAnswer& WorkerConnection::Query(HostFunction function, const std::string& args, bool cacheable) {
  if (cacheable) {
    if (const auto it = cache_.find(args); it != cache_.end()) return it->second;
  }
  FlushSeries();
  // args starts with the function id (the cache key); the message carries it too.
  if (channel_->Send(MessageType::kQuery, args) != Channel::Failure::kNone) _exit(kExitLostRunner);
  if (channel_->Receive(&reply_) != Channel::Failure::kNone || reply_.type != MessageType::kQueryReply) {
    _exit(kExitLostRunner);
  }
  QueryAnswer answer;
  Decoder in(reply_.payload);
  if (!DecodeAnswer(in, &answer)) _exit(kExitLostRunner);
  (void)function;
  if (cacheable) return cache_.emplace(args, std::move(answer)).first->second;
  return call_answers_.emplace_back(std::move(answer));
}

void WorkerConnection::Note(MessageType type, const std::string& payload) {
  // Reports ride with the call's reply (or its next query), after the series points published
  // before them; a log line goes out at once, ahead of them, so that what a plugin logged before
  // it crashed reaches the runner while the crashed call's reports never do.
  if (type == MessageType::kLog) {
    if (channel_->SendAhead(type, payload) != Channel::Failure::kNone) _exit(kExitLostRunner);
    return;
  }
  FlushSeries();
  if (channel_->Post(type, payload) != Channel::Failure::kNone) _exit(kExitLostRunner);
}

uint32_t WorkerConnection::SeriesId(litmus_str_t series, litmus_str_t tensor) {
  // The runner judges bad names point by point (as in-process): they are never interned.
  if (series.data == nullptr || series.size == 0 || (tensor.data == nullptr && tensor.size != 0)) return kSeriesRaw;
  const std::string_view name(series.data, series.size);
  const std::string_view of = tensor.size == 0 ? std::string_view() : std::string_view(tensor.data, tensor.size);
  if (next_series_id_ < series_names_.size()) {
    const auto& [n, t] = series_names_[next_series_id_];
    if (n == name && t == of) return next_series_id_++;
  }
  const uint64_t name_size = name.size();  // (first: names with NUL bytes never collide)
  series_key_.assign(reinterpret_cast<const char*>(&name_size), sizeof name_size);
  series_key_.append(name);
  series_key_.append(of);
  if (const auto it = series_ids_.find(series_key_); it != series_ids_.end()) {
    next_series_id_ = it->second + 1;
    return it->second;
  }
  if (series_names_.size() >= kMaxSeriesIds) return kSeriesRaw;
  const auto id = static_cast<uint32_t>(series_names_.size());
  series_names_.emplace_back(std::string(name), std::string(of));
  series_ids_.emplace(series_key_, id);
  next_series_id_ = id + 1;
  return id | kSeriesDefine;
}

void WorkerConnection::AddSeriesPoint(litmus_str_t series, litmus_str_t tensor, int64_t step, double value) {
  const uint32_t id = SeriesId(series, tensor);
  series_.Put(id);
  if (id == kSeriesRaw) {
    PutStr(series_, series);
    PutStr(series_, tensor);
  } else if ((id & kSeriesDefine) != 0) {
    const auto& [n, t] = series_names_[id & ~kSeriesDefine];
    series_.PutString(n).PutString(t);
  }
  series_.Put(step).Put(value);
  ++series_count_;
  // Bounded: a rule publishing without end within one call still sends as it goes.
  if (series_.bytes().size() >= (size_t{1} << 20)) FlushSeries();
}

void WorkerConnection::FlushSeries() {
  if (series_count_ == 0) return;
  Encoder note;
  note.Reserve(sizeof(uint64_t) + series_.bytes().size());
  note.Put<uint64_t>(series_count_).PutRaw(series_.bytes());
  series_.Clear();
  series_count_ = 0;
  if (channel_->Post(MessageType::kReportSeries, note.bytes()) != Channel::Failure::kNone) _exit(kExitLostRunner);
}

const litmus_host_api_t* WorkerHostApi(WorkerConnection* connection) {
  g_connection = connection;
  return &kWorkerHostApi;
}

}  // namespace litmus::isolation
