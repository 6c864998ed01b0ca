// IsolatedRule: spawning, the request/serve loop, query answers, the Invoke tensor table and
// failure classification. Thread-safety: see isolated_rule.h.
#include "isolation/isolated_rule.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "isolation/query_answer_cache.h"
#include "isolation/step_table.h"
#include "isolation/stop_watchdog.h"
#include "isolation/worker_host_api.h"

namespace litmus::isolation {
namespace {

// An answer of IsolatedRule::Answer that holds LITMUS_OK and no error message (status, error
// flag, error text, output).
bool AnsweredOk(std::string_view answer) {
  Decoder in(answer);
  const int32_t status = in.Get<int32_t>();
  const uint8_t has_error = in.Get<uint8_t>();
  return !in.failed() && status == LITMUS_OK && has_error == 0;
}

std::string Seconds(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", s);
  return buffer;
}

std::string Bytes(uint64_t n) {
  if (n % (uint64_t{1} << 30) == 0) return std::to_string(n >> 30) + " GiB";
  if (n % (uint64_t{1} << 20) == 0) return std::to_string(n >> 20) + " MiB";
  return std::to_string(n) + " bytes";
}

// The step a call is about, for messages.
std::string AtStep(const char* function, int64_t step) {
  return std::string("in ") + function + " at step " + std::to_string(step);
}

// Whether a failed call's text says an allocation failed (the SDK's bad_alloc text, or a
// plugin's own): with a memory limit set, that is the limit.
bool LooksOutOfMemory(const std::string& text) {
  return text == "out of memory" || text.find("bad_alloc") != std::string::npos ||
         text == "out of memory in host function";
}

}  // namespace

IsolatedRule::IsolatedRule(const LoadedRule& rule, std::string configuration_name, std::vector<Trial*> trials,
                           WorkerLimits limits, std::shared_ptr<SharedArena> arena,
                           std::shared_ptr<TensorTable> table)
    : rule_(rule),
      configuration_name_(std::move(configuration_name)),
      trials_(std::move(trials)),
      limits_(std::move(limits)),
      arena_(std::move(arena)),
      table_(std::move(table)),
      ctx_(configuration_name_, trials_, &report_),
      require_ctx_(configuration_name_, trials_, nullptr),
      predictor_(trials_.empty() ? nullptr : trials_[0]) {}

StatusOr<std::unique_ptr<IsolatedRule>> IsolatedRule::Create(const LoadedRule& rule, std::string configuration_name,
                                                             std::vector<Trial*> trials,
                                                             const std::map<std::string, std::string>& params,
                                                             bool allow_unknown_params,
                                                             std::vector<std::string>* warnings, WorkerLimits limits,
                                                             std::shared_ptr<SharedArena> arena,
                                                             std::shared_ptr<TensorTable> table, StartedWorker worker) {
  const std::string who = "rule " + rule.name + " (plugin " + rule.plugin_path + ")";
  std::unique_ptr<IsolatedRule> self(
      new IsolatedRule(rule, std::move(configuration_name), std::move(trials), std::move(limits), std::move(arena),
                       std::move(table)));
  self->process_ = std::move(worker.process);
  self->channel_ = std::move(worker.channel);
  self->progress_ = std::move(worker.progress);
  self->process_->SetLogPath(self->limits_.log_path);

  Encoder init;
  init.PutString(rule.plugin_path).PutString(rule.name).PutString(self->configuration_name_);
  init.Put<uint32_t>(static_cast<uint32_t>(self->trials_.size())).Put<uint64_t>(self->limits_.memory_bytes);
  init.Put<uint64_t>(self->Generation());
  // The lowest LITMUS_LOG_* level the runner's logger shows: the worker drops the rest itself.
  const spdlog::level::level_enum level = spdlog::get_level();
  init.Put<int32_t>(level <= spdlog::level::trace   ? LITMUS_LOG_TRACE
                    : level <= spdlog::level::debug ? LITMUS_LOG_DEBUG
                    : level <= spdlog::level::info  ? LITMUS_LOG_INFO
                    : level <= spdlog::level::warn  ? LITMUS_LOG_WARNING
                    : level <= spdlog::level::err   ? LITMUS_LOG_ERROR
                                                    : LITMUS_LOG_ERROR + 1);
  init.Put<uint64_t>(params.size());
  for (const auto& [key, value] : params) init.PutString(key).PutString(value);
  init.Put<uint8_t>(allow_unknown_params ? 1 : 0);
  init.Put<uint8_t>(self->limits_.keep_series ? 1 : 0);
  Message reply;
  if (auto failed = self->Call(MessageType::kInit, init.bytes(), PluginCallPhase::kCreate, "in create", &reply,
                               MessageType::kInitReply)) {
    return InternalError(who + ": create failed: " + failed->message);
  }
  Decoder in(reply.payload);
  const auto code = static_cast<StatusCode>(in.Get<int32_t>());
  const std::string message = in.GetString();
  const uint64_t warning_count = in.Get<uint64_t>();
  for (uint64_t i = 0; i < warning_count && !in.failed(); ++i) {
    std::string w = in.GetString();
    if (warnings != nullptr) warnings->push_back(std::move(w));
  }
  self->polls_ = in.Get<uint8_t>() != 0;
  const bool out_of_memory = in.Get<uint8_t>() != 0;
  if (in.failed() || reply.type != MessageType::kInitReply) {
    return InternalError(who + ": create failed: " +
                         self->Fail("in create", "sent a malformed reply (protocol error)").message);
  }
  if (code != StatusCode::kOk) {
    if (self->limits_.memory_bytes > 0 && (out_of_memory || LooksOutOfMemory(message))) {
      return InternalError(who + ": create failed: " +
                           self->Fail("in create", "exceeded the memory limit of " + Bytes(self->limits_.memory_bytes) +
                                                       " (--rule-memory)")
                               .message);
    }
    // The worker checked and created exactly as RuleInstance::Create: same codes and texts.
    return Status(code, message);
  }
  return self;
}

StatusOr<StartedWorker> StartWorker(const SharedArena& arena, const std::string& log_path, uint64_t log_bytes) {
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    return InternalError(std::string("cannot start a rule worker process: socketpair: ") + std::strerror(errno));
  }
  StatusOr<int> arena_fd = arena.OpenReadOnly();
  if (!arena_fd.ok()) {
    close(sockets[0]);
    close(sockets[1]);
    return InternalError("cannot start a rule worker process: " + arena_fd.status().message());
  }
  StatusOr<std::unique_ptr<ProgressSlot>> progress = ProgressSlot::Create();
  if (!progress.ok()) {
    close(sockets[0]);
    close(sockets[1]);
    close(*arena_fd);
    return InternalError("cannot start a rule worker process: " + progress.status().message());
  }
  auto process = WorkerProcess::Spawn(sockets[1], *arena_fd, (*progress)->fd(), log_path, log_bytes);
  close(sockets[1]);
  close(*arena_fd);
  if (!process.ok()) {
    close(sockets[0]);
    return InternalError("cannot start a rule worker process: " + process.status().message());
  }
  return StartedWorker{std::move(process).value(), std::make_unique<Channel>(sockets[0]), std::move(progress).value()};
}

IsolatedRule::~IsolatedRule() {
  spdlog::debug("rule {}: {} steps in {} invoke calls, {} queries during them, {} set_required_tensors calls",
                configuration_name_, steps_invoked_, invoke_calls_, queries_in_invoke_, declare_calls_);
  if (process_ && !failed_) {
    const Channel::Limits limits{std::chrono::steady_clock::now() + std::chrono::seconds(2), nullptr};
    if (channel_->Send(MessageType::kDestroy, {}, limits) == Channel::Failure::kNone) {
      // destroy() is the plugin's; give it a moment (the socket closes when the worker exits),
      // then stop waiting.
      Message ignored;
      while (channel_->Receive(&ignored, limits) == Channel::Failure::kNone) {
      }
      process_->WaitFor(std::chrono::milliseconds(200));
    }
  }
  process_.reset();  // kills (if still running) and reaps
}

uint64_t IsolatedRule::Generation() const { return TrialsGeneration(trials_); }

PluginCallResult IsolatedRule::Stopped() {
  // Not the rule's failure, and not an outcome: the runner sees stopped() and leaves the step
  // unevaluated (a resumed job evaluates it), then ends the rule Stopped.
  stopped_ = true;
  if (process_) process_->Kill();
  failed_ = PluginCallResult{LITMUS_STEP_UNAVAILABLE, "the job was stopped before the rule returned"};
  return *failed_;
}

PluginCallResult IsolatedRule::Fail(const std::string& what, const std::string& cause) {
  if (process_) process_->Kill();
  failed_ = PluginCallResult{LITMUS_INTERNAL, "its worker process " + cause + " " + what};
  spdlog::debug("rule {}: {}", configuration_name_, failed_->message);
  return *failed_;
}

PluginCallResult IsolatedRule::Broken(Channel::Failure failure, const std::string& what) {
  switch (failure) {
    case Channel::Failure::kAborted:
      return Stopped();
    case Channel::Failure::kTimedOut:
      return Fail(what, "timed out after " + Seconds(limits_.timeout_s) + " s (--rule-timeout, or the rule's " +
                            kRuleTimeoutParameter + " parameter)");
    case Channel::Failure::kProtocol:
      return Fail(what, "broke the worker protocol (" + channel_->error() + ")");
    case Channel::Failure::kClosed:
    case Channel::Failure::kNone:
      break;
  }
  // The socket closed: the worker is ending (or closed it on purpose: then it must go).
  const std::optional<int> status = process_->WaitFor(std::chrono::seconds(2));
  if (!status) return Fail(what, "closed its connection to the runner");
  if (WIFEXITED(*status) && WEXITSTATUS(*status) == kWorkerExitWrongBuild) {
    return Fail(what + ": " + RuleWorkerExecutable() + " is the rule worker of another litmus than this one (" +
                    RuleWorkerBuild() + "); install litmus and its litmus-rule-worker together",
                "exited");
  }
  // (Workers lead their own process group: a stop's signal never reaches them, so a worker that
  // died of a signal crashed, stop or not.)
  return Fail(what, DescribeWaitStatus(*status));
}

Channel::Limits IsolatedRule::CallLimits() const {
  const auto timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(limits_.timeout_s));
  return Channel::Limits{std::chrono::steady_clock::now() + timeout, [] { return StopRequested(); }};
}

bool IsolatedRule::SendRequest(MessageType type, const std::string& payload, const std::string& what) {
  // The deadline of the call starts when its reply is awaited; sending only waits for a full
  // socket buffer.
  if (const auto f = channel_->Send(type, payload, CallLimits()); f != Channel::Failure::kNone) {
    Broken(f, what);  // the call's receiving half reports it
    return false;
  }
  return true;
}

std::optional<PluginCallResult> IsolatedRule::Call(MessageType type, const std::string& payload,
                                                   PluginCallPhase phase, const std::string& what, Message* reply,
                                                   MessageType expected) {
  if (failed_) return failed_;
  const Channel::Limits limits = CallLimits();
  ctx_.BeginCall(phase);
  struct EndCall {
    IsolatedRule* self;
    ~EndCall() {
      self->ctx_.EndCall();
      self->keep_alive_.clear();
    }
  } end_call{this};

  const auto broken = [&](Channel::Failure failure) { return Broken(failure, what); };

  if (type != MessageType::kNone) {
    if (const auto f = channel_->Send(type, payload, limits); f != Channel::Failure::kNone) return broken(f);
  }
  while (true) {
    Message message;
    if (const auto f = channel_->Receive(&message, limits); f != Channel::Failure::kNone) return broken(f);
    switch (message.type) {
      case MessageType::kReply:
      case MessageType::kInitReply:
      case MessageType::kAheadReply:
        if (message.type != expected) return broken(Channel::Failure::kProtocol);
        *reply = std::move(message);
        return std::nullopt;
      case MessageType::kQuery: {
        if (phase == PluginCallPhase::kInvoke) ++queries_in_invoke_;
        const std::string answer = Answer(message.payload);
        if (const auto f = channel_->Send(MessageType::kQueryReply, answer, limits); f != Channel::Failure::kNone) {
          return broken(f);
        }
        break;
      }
      case MessageType::kLog: {
        Decoder in(message.payload);
        const int32_t level = in.Get<int32_t>();
        const std::string_view text = in.GetBytes();
        HostApi()->log(&ctx_, level, text.data(), text.size());
        break;
      }
      case MessageType::kReportViolations:
        HostApi()->report_violations(&ctx_, Decoder(message.payload).Get<int64_t>());
        break;
      case MessageType::kReportDetail: {
        Decoder in(message.payload);
        const litmus_str_t key = GetStr(in);
        const litmus_str_t value = GetStr(in);
        if (!in.failed()) HostApi()->report_detail(&ctx_, key, value);
        break;
      }
      case MessageType::kReportSeries:
        if (!ReadSeriesNote(message.payload)) return broken(Channel::Failure::kProtocol);
        break;
      case MessageType::kReportThreshold: {
        Decoder in(message.payload);
        const litmus_str_t series = GetStr(in);
        const double value = in.Get<double>();
        const int32_t fires_when = in.Get<int32_t>();
        if (!in.failed()) HostApi()->report_threshold(&ctx_, series, value, fires_when);
        break;
      }
      case MessageType::kReportRecommendation: {
        Decoder in(message.payload);
        const litmus_str_t text = GetStr(in);
        if (!in.failed()) HostApi()->report_recommendation(&ctx_, text);
        break;
      }
      default:
        return broken(Channel::Failure::kProtocol);
    }
  }
}

bool IsolatedRule::ReadSeriesNote(std::string_view payload) {
  Decoder in(payload);
  const uint64_t count = in.Get<uint64_t>();
  for (uint64_t i = 0; i < count && !in.failed(); ++i) {
    const uint32_t id = in.Get<uint32_t>();
    if (id == kSeriesRaw) {
      const litmus_str_t series = GetStr(in);
      const litmus_str_t tensor = GetStr(in);
      const int64_t step = in.Get<int64_t>();
      const double value = in.Get<double>();
      if (!in.failed()) HostApi()->report_series(&ctx_, series, tensor, step, value);
      continue;
    }
    if ((id & kSeriesDefine) != 0) {
      // Ids are defined in order, once each.
      if ((id & ~kSeriesDefine) != series_names_.size() || series_names_.size() >= kMaxSeriesIds) return false;
      const std::string_view series = in.GetBytes();
      const std::string_view tensor = in.GetBytes();
      if (in.failed()) return false;
      series_names_.push_back({std::string(series), std::string(tensor)});
    } else if (id >= series_names_.size()) {
      return false;
    }
    SeriesName& name = series_names_[id & ~kSeriesDefine];
    const int64_t step = in.Get<int64_t>();
    const double value = in.Get<double>();
    if (!in.failed()) ReportSeriesAt(&ctx_, name.series, name.tensor, &name.index, step, value);
  }
  return !in.failed() && in.at_end();
}

std::string IsolatedRule::Answer(std::string_view query) {
  Decoder in(query);
  const auto function = static_cast<HostFunction>(in.Get<uint32_t>());
  const litmus_host_api_t* host = HostApi();
  litmus_ctx* ctx = &ctx_;
  ctx_.has_error = false;
  ctx_.error.clear();
  Encoder out;  // the function's output
  litmus_status_t status = LITMUS_INTERNAL;
  switch (function) {
    case HostFunction::kSteps: {
      const uint32_t trial = in.Get<uint32_t>();
      const int32_t mode = in.Get<int32_t>();
      const int64_t* steps = nullptr;
      size_t count = 0;
      status = host->steps(ctx, trial, mode, &steps, &count);
      out.PutBytes(steps, count * sizeof(int64_t));
      break;
    }
    case HostFunction::kStepMode: {
      const uint32_t trial = in.Get<uint32_t>();
      const int64_t step = in.Get<int64_t>();
      RememberStepQuery(query, sizeof(uint32_t) * 2, step);
      int32_t mode = 0;
      int64_t mode_step = 0;
      status = host->step_mode(ctx, trial, step, &mode, &mode_step);
      out.Put(mode).Put(mode_step);
      break;
    }
    case HostFunction::kGlobalStep: {
      const uint32_t trial = in.Get<uint32_t>();
      const int32_t mode = in.Get<int32_t>();
      const int64_t mode_step = in.Get<int64_t>();
      RememberModeStepQuery(query, sizeof(uint32_t) * 2 + sizeof(int32_t), trial, mode, mode_step);
      int64_t step = 0;
      status = host->global_step(ctx, trial, mode, mode_step, &step);
      out.Put(step);
      break;
    }
    case HostFunction::kWorkers:
    case HostFunction::kTensorNames: {
      const uint32_t trial = in.Get<uint32_t>();
      const litmus_str_t* names = nullptr;
      size_t count = 0;
      if (function == HostFunction::kWorkers) {
        status = host->workers(ctx, trial, &names, &count);
      } else {
        litmus_tensor_query_t q{};
        q.struct_size = sizeof(q);
        q.collection = GetStr(in);
        q.regex = GetStr(in);
        q.step = in.Get<int64_t>();
        q.mode = in.Get<int32_t>();
        RememberStepQuery(query, query.size() - sizeof(int64_t) - sizeof(int32_t), q.step);
        status = host->tensor_names(ctx, trial, &q, &names, &count);
      }
      Encoder list;
      list.Put<uint64_t>(count);
      for (size_t i = 0; i < count; ++i) list.PutBytes(names[i].data, names[i].size);
      out = std::move(list);
      break;
    }
    case HostFunction::kTensorSteps: {
      const uint32_t trial = in.Get<uint32_t>();
      const litmus_str_t name = GetStr(in);
      const int32_t mode = in.Get<int32_t>();
      const int64_t* steps = nullptr;
      size_t count = 0;
      status = host->tensor_steps(ctx, trial, name, mode, &steps, &count);
      out.PutBytes(steps, count * sizeof(int64_t));
      break;
    }
    case HostFunction::kTensorValue: {
      const uint32_t trial = in.Get<uint32_t>();
      const litmus_str_t name = GetStr(in);
      const int64_t step = in.Get<int64_t>();
      const int32_t mode = in.Get<int32_t>();
      const litmus_str_t worker = GetStr(in);
      litmus_tensor_view_t view{};
      view.struct_size = in.Get<uint32_t>() < sizeof(uint32_t) ? 0 : sizeof(view);  // the worker's check
      status = host->tensor_value(ctx, trial, name, step, mode, worker, &view);
      if (status != LITMUS_OK) break;
      out.Put<int32_t>(view.dtype);
      uint64_t offset = 0;
      if (view.strings != nullptr || view.data == nullptr) {
        out.Put<uint8_t>(0);
      } else if (arena_->Contains(view.data, view.byte_size, &offset)) {
        out.Put<uint8_t>(1).Put<uint64_t>(offset).Put<uint64_t>(view.byte_size);  // ctx_ keeps it alive
      } else {
        out.Put<uint8_t>(2).PutBytes(view.data, view.byte_size);
      }
      out.PutBytes(view.shape, view.rank * sizeof(int64_t));
      out.Put<int64_t>(view.num_elements);
      const uint64_t strings = view.strings == nullptr ? 0 : static_cast<uint64_t>(view.num_elements);
      out.Put<uint64_t>(strings);
      for (uint64_t i = 0; i < strings; ++i) out.PutBytes(view.strings[i].data, view.strings[i].size);
      out.Put<int64_t>(view.step).Put<int32_t>(view.mode).Put<int64_t>(view.mode_step);
      break;
    }
    case HostFunction::kTensorReduction: {
      const uint32_t trial = in.Get<uint32_t>();
      const litmus_str_t name = GetStr(in);
      const int64_t step = in.Get<int64_t>();
      const int32_t mode = in.Get<int32_t>();
      const int32_t reduction = in.Get<int32_t>();
      const uint32_t abs = in.Get<uint32_t>();
      const litmus_str_t worker = GetStr(in);
      double value = 0;
      status = host->tensor_reduction(ctx, trial, name, step, mode, reduction, abs, worker, &value);
      out.Put(value);
      break;
    }
    case HostFunction::kTensorShape: {
      const uint32_t trial = in.Get<uint32_t>();
      const litmus_str_t name = GetStr(in);
      const int64_t step = in.Get<int64_t>();
      const int32_t mode = in.Get<int32_t>();
      const litmus_str_t worker = GetStr(in);
      const int64_t* shape = nullptr;
      uint32_t rank = 0;
      status = host->tensor_shape(ctx, trial, name, step, mode, worker, &shape, &rank);
      out.PutBytes(shape, rank * sizeof(int64_t));
      break;
    }
    case HostFunction::kRequireTensor: {
      const uint32_t trial = in.Get<uint32_t>();
      const litmus_str_t name = GetStr(in);
      const uint32_t regex = in.Get<uint32_t>();
      std::vector<TensorRequirement> found;
      require_ctx_.BeginCall(PluginCallPhase::kSetRequiredTensors, &found);
      ctx = &require_ctx_;
      status = host->require_tensor(ctx, trial, name, nullptr, 0, regex);
      Encoder list;
      list.Put<uint64_t>(found.size());
      for (const TensorRequirement& r : found) list.PutString(r.name);
      out = std::move(list);
      break;
    }
    case HostFunction::kAddAction: {
      const litmus_str_t action = GetStr(in);
      status = host->add_action(ctx, action);
      break;
    }
  }
  Encoder answer;
  answer.Put<int32_t>(status).Put<uint8_t>(ctx->has_error ? 1 : 0).PutString(ctx->error).PutString(out.bytes());
  if (ctx == &require_ctx_) require_ctx_.EndCall();
  return answer.Take();
}

std::optional<PluginCallResult> IsolatedRule::ReadResult(Decoder& in, const std::string& what) {
  PluginCallResult result;
  result.status = in.Get<int32_t>();
  result.message = in.GetString();
  const bool out_of_memory = in.Get<uint8_t>() != 0;
  if (in.failed()) return Fail(what, "sent a malformed reply (protocol error)");
  if (limits_.memory_bytes > 0 && result.status != LITMUS_OK && result.status != LITMUS_CONDITION_MET &&
      (out_of_memory || LooksOutOfMemory(result.message))) {
    return Fail(what, "exceeded the memory limit of " + Bytes(limits_.memory_bytes) + " (--rule-memory)");
  }
  return result;
}

PluginCallResult IsolatedRule::RequiredTensors(int64_t step, std::vector<TensorRequirement>* out) {
  out->clear();
  ForgetPredictions();
  DrainAhead();
  // (What DeclareSteps read about earlier steps is not asked for any more; what it read about
  // this one stands even when the worker failed after it.)
  // A list read before (ahead, or by DeclareSteps) while the trials stayed as they were.
  const auto read_before = [&](Ahead read) {
    last_declared_ = last_declared_ ? std::max(*last_declared_, step) : step;
    *out = std::move(read.requirements);
    if (read.result.status == LITMUS_OK) declared_[step] = *out;
    return std::move(read.result);
  };
  while (!declared_steps_.empty() && declared_steps_.front().step < step) declared_steps_.pop_front();
  if (!declared_steps_.empty() && declared_steps_.front().step == step) {
    Ahead declared = std::move(declared_steps_.front());
    declared_steps_.pop_front();
    if (declared.generation == Generation()) return read_before(std::move(declared));
    declared_steps_.clear();  // (the trials changed since: asked again)
  }
  if (failed_) return *failed_;
  if (ahead_ && ahead_->step == step && ahead_->generation == Generation()) {
    return read_before(*std::exchange(ahead_, std::nullopt));
  }
  ahead_.reset();
  last_declared_ = last_declared_ ? std::max(*last_declared_, step) : step;
  const std::string what = AtStep("set_required_tensors", step);
  Encoder request;
  request.Put<uint64_t>(Generation()).Put<int64_t>(step);
  Message reply;
  ++declare_calls_;
  if (auto failed = Call(MessageType::kRequiredTensors, request.bytes(), PluginCallPhase::kSetRequiredTensors, what,
                         &reply)) {
    return *failed;
  }
  Decoder in(reply.payload);
  const PluginCallResult result = ReadRequirements(in, what, step, out);
  if (result.status == LITMUS_OK) declared_[step] = *out;
  return result;
}

void IsolatedRule::DeclareSteps(std::span<const int64_t> steps) {
  DrainAhead();
  if (failed_ || steps.empty()) return;  // (what a failed request read stands: RequiredTensors answers it)
  declared_steps_.clear();
  DeclaringSteps declaring{{steps.begin(), steps.end()}, Generation(), {}, {}};
  declaring.range = std::to_string(steps.front()) + "-" + std::to_string(steps.back());
  declaring.what = "in set_required_tensors at steps " + declaring.range + " (one request, --rule-batch-steps)";
  Encoder request;
  request.Put<uint64_t>(declaring.generation).Put<uint64_t>(steps.size());
  for (const int64_t step : steps) request.Put<int64_t>(step);
  ++declare_calls_;
  progress_->Reset();  // (before the worker can write it)
  // Sent now, read later: the worker declares while the runner invokes the other rules (a round
  // trip here left every other worker idle: ~10 % of a 20-rule job on a trial without trees).
  if (const auto f = channel_->Send(MessageType::kRequiredTensorsSteps, request.bytes(), CallLimits());
      f != Channel::Failure::kNone) {
    Broken(f, declaring.what);
    return;
  }
  declaring_ = std::move(declaring);
}

void IsolatedRule::FinishDeclareSteps() {
  if (!declaring_) return;
  const DeclaringSteps declaring = *std::move(declaring_);
  declaring_.reset();
  const std::span<const int64_t> steps = declaring.steps;
  const std::string& range = declaring.range;
  const std::string& what = declaring.what;
  const uint64_t generation = declaring.generation;
  Message reply;
  if (Call(MessageType::kNone, {}, PluginCallPhase::kSetRequiredTensors, what, &reply)) {
    // The worker crashed, exited or hung inside the request: at the step its progress names.
    // The steps before it were declared, each without a tensor it needs (the worker goes on only
    // then): skipped, as they would have been; RequiredTensors returns the failure from there.
    const ProgressSlot::Progress at = progress_->Get();
    if (!failed_ || stopped_ || at.call != ProgressSlot::Call::kSetRequiredTensors ||
        !failed_->message.ends_with(what)) {
      return;
    }
    for (const int64_t step : steps) {
      if (step >= at.step) break;
      declared_steps_.push_back({step, generation,
                                 PluginCallResult{LITMUS_TENSOR_UNAVAILABLE_FOR_STEP,
                                                  "a tensor set_required_tensors needs at step " +
                                                      std::to_string(step) + " is missing"},
                                 {}});
    }
    failed_->message.resize(failed_->message.size() - what.size());
    failed_->message += AtStep("set_required_tensors", at.step) + " (one request for steps " + range +
                        ", --rule-batch-steps)";
    return;
  }
  Decoder in(reply.payload);
  const uint64_t count = in.Get<uint64_t>();
  if (in.failed() || count == 0 || count > steps.size()) {
    Fail(what, "sent a malformed reply (protocol error)");
    return;
  }
  for (uint64_t k = 0; k < count && !failed_; ++k) {
    Ahead declared{steps[k], generation, {}, {}};
    declared.result = ReadRequirements(in, AtStep("set_required_tensors", steps[k]), steps[k], &declared.requirements);
    declared_steps_.push_back(std::move(declared));
  }
  if (failed_) declared_steps_.clear();
}

void IsolatedRule::DrainAhead() {
  FinishDeclareSteps();
  if (!ahead_pending_ || failed_) return;
  const Ahead pending = *std::move(ahead_pending_);
  ahead_pending_.reset();
  const std::string what = AtStep("set_required_tensors", pending.step);
  Message reply;
  query_step_ = std::pair(pending.step, true);
  const bool failed =
      Call(MessageType::kNone, {}, PluginCallPhase::kSetRequiredTensors, what, &reply, MessageType::kAheadReply)
          .has_value();
  query_step_.reset();
  if (failed) return;  // failed_ is set
  Decoder in(reply.payload);
  if (in.Get<int64_t>() != pending.step) {
    Fail(what, "sent a malformed reply (protocol error)");
    return;
  }
  Ahead ahead = pending;
  ahead.result = ReadRequirements(in, what, pending.step, &ahead.requirements);
  if (!failed_) ahead_ = std::move(ahead);
}

std::optional<int64_t> IsolatedRule::NextDeclareStep() const {
  if (!last_declared_) return std::nullopt;
  return NextAvailableAfter(*last_declared_);
}

std::optional<int64_t> IsolatedRule::NextAvailableAfter(int64_t step) const {
  if (trials_.empty()) return std::nullopt;
  return NextAvailableStepAfter(*trials_[0], step);
}

PluginCallResult IsolatedRule::ReadRequirements(Decoder& in, const std::string& what, int64_t step,
                                                std::vector<TensorRequirement>* out) {
  out->clear();
  std::optional<PluginCallResult> result = ReadResult(in, what);
  if (result->status != LITMUS_OK) return *result;
  const uint64_t count = in.Get<uint64_t>();
  if (count == kSameRequirements && !predictor_.history().entries().empty() && !in.failed()) {
    // The last list again, relative to its step (protocol.h).
    const RequirementHistory::Entry& last = predictor_.history().entries().back();
    RequirementHistory::Moved(last.requirements, step - last.step, out);
    predictor_.history().Record(step, *out);
    return *result;
  }
  // The worker recorded exact, checked names: record them again here, on the runner's trials.
  ctx_.BeginCall(PluginCallPhase::kSetRequiredTensors, out);
  for (uint64_t i = 0; i < count && count != kSameRequirements && !in.failed(); ++i) {
    const uint32_t trial = in.Get<uint32_t>();
    const std::string_view name = in.GetBytes();
    const std::vector<int64_t> steps = in.GetVector<int64_t>();
    const uint32_t flags = in.Get<uint8_t>() != 0 ? LITMUS_REQUIRE_REDUCTIONS_ONLY : 0u;
    HostApi()->require_tensor_ex(&ctx_, trial, {name.data(), name.size()}, steps.data(), steps.size(), flags);
  }
  ctx_.EndCall();
  if (in.failed() || count == kSameRequirements) {  // (no list before it to repeat)
    out->clear();
    return Fail(what, "sent a malformed reply (protocol error)");
  }
  predictor_.history().Record(step, *out);
  return *result;
}

void IsolatedRule::AppendLocalTensors(int64_t step, const InvokeInput& input, Encoder& out) {
  // The step's table: where it is, and the rule's trial numbers in it.
  if (input.table != nullptr) {
    out.Put<uint8_t>(1).Put<uint64_t>(input.table->offset()).Put<uint64_t>(input.table->size());
    out.PutBytes(input.trial_indices.data(), input.trial_indices.size_bytes());
  } else {
    out.Put<uint8_t>(0);
  }
  // Names first defined by this request, then the entries: name id, the rule's trial number,
  // then what TensorTable encodes.
  static const ReadValueIndex kUnindexed;  // (its Find is a binary search)
  const ReadValueIndex& index = input.index != nullptr ? *input.index : kUnindexed;
  Encoder names, entries;
  uint64_t new_names = 0, count = 0;
  // The list the runner read the step's values for: predicted for this call, or declared.
  const auto it = declared_.find(step);
  const std::vector<TensorRequirement>* list = it != declared_.end() ? &it->second : nullptr;
  if (const RequirementHistory::Entry* p = predictor_.Predicted(step)) list = &p->requirements;
  if (list != nullptr) {
    for (const TensorRequirement& req : *list) {
      if (req.trial >= trials_.size()) continue;
      const Trial& trial = *trials_[req.trial];
      const uint32_t job_trial = req.trial < input.trial_indices.size() ? input.trial_indices[req.trial] : UINT32_MAX;
      for (const int64_t s : req.steps) {
        const ReadValue* known =
            input.values != nullptr ? index.Find(*input.values, ReadKey{.trial = job_trial, .name = req.name, .step = s}) : nullptr;
        if (input.table != nullptr && known != nullptr && StepTable::Covers(*arena_, *known)) continue;  // in the table
        auto [id, inserted] = name_ids_.try_emplace(req.name.data(), static_cast<uint32_t>(name_ids_.size()));
        if (inserted) {
          names.Put<uint32_t>(id->second).PutString(req.name);
          ++new_names;
        }
        const size_t mark = entries.bytes().size();
        entries.Put<uint32_t>(id->second).Put<uint32_t>(req.trial);
        TensorPtr keep;
        if (!table_->Append(trial, req.name, s, step, entries, &keep)) {
          entries.Truncate(mark);
          continue;
        }
        keep_alive_.push_back(std::move(keep));
        ++count;
      }
    }
  }
  if (it != declared_.end()) declared_.erase(declared_.begin(), std::next(it));
  out.Put<uint64_t>(new_names).PutRaw(names.bytes());
  out.Put<uint64_t>(count).PutRaw(entries.bytes());
}

// Builds the kInvoke request of `started` (the table of required tensors, the ahead step).
std::string IsolatedRule::InvokeRequest(const Started& started, const InvokeInput& input) {
  Encoder request;
  request.Put<uint64_t>(started.generation).Put<int64_t>(started.step);
  AppendLocalTensors(started.step, input, request);
  request.Put<uint8_t>(started.next ? 1 : 0).Put<int64_t>(started.next.value_or(0));
  AppendStepQueryAnswers(started.step, started.next ? std::span<const int64_t>(&*started.next, 1)
                                                    : std::span<const int64_t>(),
                         input.answers, request);
  return request.Take();
}

void IsolatedRule::RememberStepQuery(std::string_view query, size_t step_offset, int64_t step) {
  if (!query_step_ || query_step_->first != step || step_queries_.size() >= kMaxStepQueries) return;
  std::optional<std::string> args = QueryTemplate(query, step_offset);  // any step
  if (!args) return;
  for (const StepQuery& known : step_queries_) {
    if (known.args == *args && known.ahead == query_step_->second) return;
  }
  step_queries_.push_back({*std::move(args), step_offset, query_step_->second, std::nullopt, 0, 0});
}

std::optional<int64_t> IsolatedRule::ModeStepOf(uint32_t trial, int64_t step, int32_t mode) {
  int32_t step_mode = 0;
  int64_t mode_step = 0;
  const bool found = HostApi()->step_mode(&ctx_, trial, step, &step_mode, &mode_step) == LITMUS_OK;
  ctx_.has_error = false;
  ctx_.error.clear();
  if (!found || step_mode != mode) return std::nullopt;
  return mode_step;
}

void IsolatedRule::RememberModeStepQuery(std::string_view query, size_t step_offset, uint32_t trial, int32_t mode,
                                         int64_t mode_step) {
  // WeightUpdateRatio asks for the global step of the previous TRAIN step: the mode step of
  // this step's minus one, whatever TRAIN/EVAL pattern lies between the two. Remembered once
  // seen at two steps (a query about a fixed mode step is not one).
  if (!query_step_ || query_in_later_steps_ || step_queries_.size() >= kMaxStepQueries) return;
  const std::optional<int64_t> at = ModeStepOf(trial, query_step_->first, mode);
  if (!at) return;
  std::optional<std::string> args = QueryTemplate(query, step_offset);  // any mode step
  if (!args) return;
  StepQuery q{*std::move(args), step_offset, query_step_->second, mode_step - *at, trial, mode};
  const auto same = [&](const StepQuery& known) {
    return known.args == q.args && known.ahead == q.ahead && known.mode_step_delta == q.mode_step_delta;
  };
  if (std::any_of(step_queries_.begin(), step_queries_.end(), same)) return;
  if (mode_step_candidate_ && same(mode_step_candidate_->first) && mode_step_candidate_->second != query_step_->first) {
    step_queries_.push_back(std::move(q));
    mode_step_candidate_.reset();
    return;
  }
  mode_step_candidate_ = std::pair(std::move(q), query_step_->first);
}

void IsolatedRule::AppendStepQueryAnswers(int64_t step, std::span<const int64_t> declare_steps,
                                          QueryAnswerCache* shared, Encoder& out) {
  // The queries this rule asked about the step of its last call, asked about this one now:
  // the worker finds them in its cache instead of asking (the trials cannot change before the
  // call ends, so the answers are those it would get). Each remembered query (kStepMode,
  // kGlobalStep, kTensorNames: function, then the rule's trial number) depends on its trial and
  // its bytes only, so the rules of a call share a successful answer.
  const size_t count_at = out.size();
  out.Put<uint64_t>(0);  // (the count, once known)
  uint64_t count = 0;
  std::string args;
  const auto answer = [&](const StepQuery& q, int64_t at) {
    if (q.mode_step_delta) {  // about the step `delta` mode steps from `at`, if `at` is of its mode
      const std::optional<int64_t> mode_step = ModeStepOf(q.trial, at, q.mode);
      if (!mode_step) return;
      at = *mode_step + *q.mode_step_delta;
    }
    args = q.args;
    std::memcpy(args.data() + q.step_offset, &at, sizeof(at));
    out.PutString(args);
    ++count;
    uint32_t trial_number = UINT32_MAX;
    if (args.size() >= 2 * sizeof(uint32_t)) std::memcpy(&trial_number, args.data() + sizeof(uint32_t), sizeof(uint32_t));
    const Trial* trial = shared != nullptr && trial_number < trials_.size() ? trials_[trial_number] : nullptr;
    if (trial != nullptr) {
      if (const std::string* known = shared->Find(trial, args)) {
        out.PutString(*known);
        return;
      }
    }
    const std::optional<std::pair<int64_t, bool>> saved = std::exchange(query_step_, std::nullopt);
    std::string answered = Answer(args);
    query_step_ = saved;
    out.PutString(answered);
    if (trial != nullptr && AnsweredOk(answered)) shared->Add(trial, args, std::move(answered));
  };
  for (const StepQuery& q : step_queries_) {
    if (!q.ahead) {
      answer(q, step);
      continue;
    }
    for (const int64_t at : declare_steps) answer(q, at);
  }
  out.PutAt<uint64_t>(count_at, count);
}

bool IsolatedRule::PredictRequirements(int64_t step, std::vector<TensorRequirement>* out) {
  DrainAhead();
  return !failed_ && !trials_.empty() && predictor_.Predict(step, out).has_value();
}

bool IsolatedRule::PeekRequirements(int64_t step, std::vector<TensorRequirement>* out) const {
  return !failed_ && !trials_.empty() && predictor_.Peek(step, out).has_value();
}

void IsolatedRule::ForgetPredictions() { predictor_.Forget(); }

std::string IsolatedRule::AtSteps(std::span<const int64_t> steps) {
  return "in a call of steps " + std::to_string(steps.front()) + "-" + std::to_string(steps.back()) +
         " (--rule-batch-steps)";
}

size_t IsolatedRule::StepsThatFit(size_t steps) const {
  // A call stays well inside the rule's time limit: a tenth of it, at the slowest recent pace
  // (the first call is a single step: the pace is unknown).
  if (step_seconds_ <= 0) return 1;
  const double fit = limits_.timeout_s / (10 * step_seconds_);
  return fit >= static_cast<double>(steps) ? steps : std::max<size_t>(1, static_cast<size_t>(fit));
}

void IsolatedRule::StartInvokeSteps(std::span<const int64_t> all_steps, const InvokeInput& input) {
  sent_steps_ = StepsThatFit(all_steps.size());
  const std::span<const int64_t> steps = all_steps.first(sent_steps_);
  if (steps.size() == 1) return StartInvoke(steps.front(), input);
  started_steps_.reset();
  DrainAhead();
  if (failed_) return;
  const uint64_t generation = Generation();
  Encoder request;
  request.Put<uint64_t>(generation).Put<uint64_t>(steps.size()).Put<uint8_t>(input.past_firings ? 1 : 0);
  const std::optional<int64_t> next = NextAvailableAfter(steps.back());
  for (size_t k = 0; k < steps.size(); ++k) {
    // A step declared before this call (not predicted) is its own reference.
    request.Put<int64_t>(steps[k]).Put<int64_t>(predictor_.ReferenceOf(steps[k]).value_or(steps[k]));
    request.Put<uint8_t>(k < input.skip.size() && input.skip[k] != 0 ? 0 : 1);
    AppendLocalTensors(steps[k], input, request);
    // The worker declares each step after the first, and the last's next one after them all.
    std::vector<int64_t> declares;
    if (k > 0) declares.push_back(steps[k]);
    if (k + 1 == steps.size() && next) declares.push_back(*next);
    AppendStepQueryAnswers(steps[k], declares, input.answers, request);
  }
  request.Put<uint8_t>(next ? 1 : 0).Put<int64_t>(next.value_or(0));
  progress_->Reset();  // (before the worker can write it)
  if (!SendRequest(MessageType::kInvokeSteps, request.bytes(), AtSteps(steps))) return;
  ++invoke_calls_;
  steps_invoked_ += static_cast<int64_t>(steps.size());
  started_steps_ = Started{steps.front(), generation, next};
}

std::vector<PluginCallResult> IsolatedRule::InvokeSteps(std::span<const int64_t> all_steps) {
  const std::span<const int64_t> steps = all_steps.first(std::min(sent_steps_, all_steps.size()));
  const auto started_at = std::chrono::steady_clock::now();
  const auto pace = [&](size_t ran) {  // the slowest recent seconds per step (decaying)
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at).count();
    step_seconds_ = std::max(seconds / static_cast<double>(std::max<size_t>(ran, 1)), 0.9 * step_seconds_);
  };
  if (steps.size() == 1) {
    PluginCallResult result = Invoke(steps.front());
    pace(1);
    return {std::move(result)};
  }
  const std::string what = AtSteps(steps);
  const std::optional<Started> started = std::exchange(started_steps_, std::nullopt);
  if (failed_) return {*failed_};
  if (!started || started->step != steps.front()) return {Fail(what, "was not sent the call (internal error)")};
  Message reply;
  query_step_ = std::pair(steps.front(), false);
  query_in_later_steps_ = true;
  const std::optional<PluginCallResult> failed = Call(MessageType::kNone, {}, PluginCallPhase::kInvoke, what, &reply);
  query_in_later_steps_ = false;
  query_step_.reset();
  if (failed) {
    // A worker that crashed, exited or hung inside the call: the steps it finished keep their
    // outcomes (a firing among them is reported), and the failure is at the step and call it
    // was in, as with one step per call.
    const ProgressSlot::Progress at = progress_->Get();
    if (!failed_ || stopped_ || at.call == ProgressSlot::Call::kNone || !failed_->message.ends_with(what)) {
      return {*failed};
    }
    std::vector<PluginCallResult> results;
    for (size_t k = 0; k < std::min(at.finished, steps.size() - 1); ++k) {
      const bool fired = k < ProgressSlot::kMaxSteps && (at.fired >> k & 1) != 0;
      results.push_back({fired ? LITMUS_CONDITION_MET : LITMUS_OK, ""});
    }
    failed_->message.resize(failed_->message.size() - what.size());
    failed_->message += AtStep(at.call == ProgressSlot::Call::kInvokeAtStep ? "invoke_at_step" : "set_required_tensors",
                               at.step) +
                        " (a call of steps " + std::to_string(steps.front()) + "-" + std::to_string(steps.back()) +
                        ", --rule-batch-steps)";
    results.push_back(*failed_);
    return results;
  }
  Decoder in(reply.payload);
  const uint64_t ran = in.Get<uint64_t>();
  std::vector<RequirementHistory::Entry> predicted = predictor_.Take();
  if (in.failed() || ran == 0 || ran > steps.size()) return {Fail(what, "sent a malformed reply (protocol error)")};
  std::vector<PluginCallResult> results;
  for (uint64_t k = 0; k < ran; ++k) {
    std::optional<PluginCallResult> result = ReadResult(in, AtStep("invoke_at_step", steps[k]));
    results.push_back(*std::move(result));
    if (failed_) return results;  // (the steps before keep their outcomes)
  }
  results.back().data_loss = ctx_.data_loss;  // (the runner's host functions answered the worker's reads)
  // The worker confirmed and recorded the lists of the steps it ran after the first: so here.
  for (uint64_t k = 1; k < ran; ++k) {
    const auto it = std::find_if(predicted.begin(), predicted.end(),
                                 [&](const RequirementHistory::Entry& e) { return e.step == steps[k]; });
    if (it != predicted.end()) {
      predictor_.history().Record(steps[k], std::move(it->requirements));  // (each step's once: a call's steps differ)
      continue;
    }
    const std::vector<TensorRequirement>* list = predictor_.history().At(steps[k]);
    if (list == nullptr) return {Fail(what, "ran a step whose list the runner lacks (internal error)")};
    predictor_.history().Record(steps[k], std::vector<TensorRequirement>(*list));
  }
  // A call that stopped before a predicted step whose outcome let it go on: the worker found
  // that step's list different (or the rule fired: then a search for nothing).
  if (ran < steps.size() && std::any_of(predicted.begin(), predicted.end(), [&](const RequirementHistory::Entry& e) {
        return e.step == steps[ran];
      })) {
    predictor_.Mispredicted();
  }
  if (ran == steps.size()) {
    last_declared_ = std::max(last_declared_.value_or(steps.back()), steps.back());
    if (started->next) ahead_pending_ = Ahead{*started->next, started->generation, {}, {}};
  }
  pace(ran);
  return results;
}

void IsolatedRule::StartInvoke(int64_t step, const InvokeInput& input) {
  ForgetPredictions();
  started_.reset();
  DrainAhead();
  if (failed_) return;
  const Started started{step, Generation(), NextDeclareStep()};
  std::string request = InvokeRequest(started, input);
  if (!SendRequest(MessageType::kInvoke, request, AtStep("invoke_at_step", step))) return;
  ++invoke_calls_;
  ++steps_invoked_;
  started_ = started;
}

PluginCallResult IsolatedRule::Invoke(int64_t step) {
  const std::string what = AtStep("invoke_at_step", step);
  std::optional<Started> started = std::exchange(started_, std::nullopt);
  Message reply;
  std::optional<PluginCallResult> failed;
  if (started && started->step == step) {
    query_step_ = std::pair(step, false);
    failed = Call(MessageType::kNone, {}, PluginCallPhase::kInvoke, what, &reply);
  } else {
    DrainAhead();
    if (failed_) return *failed_;
    started = Started{step, Generation(), NextDeclareStep()};
    const std::string request = InvokeRequest(*started, InvokeInput{});
    query_step_ = std::pair(step, false);
    ++invoke_calls_;
    ++steps_invoked_;
    failed = Call(MessageType::kInvoke, request, PluginCallPhase::kInvoke, what, &reply);
  }
  query_step_.reset();
  if (failed) return *failed;
  if (started->next) ahead_pending_ = Ahead{*started->next, started->generation, {}, {}};
  Decoder in(reply.payload);
  PluginCallResult result = *ReadResult(in, what);
  result.data_loss = ctx_.data_loss;  // (the runner's host functions answered the worker's reads)
  return result;
}

PluginCallResult IsolatedRule::Poll(int64_t last_step) {
  if (!polls_) return {LITMUS_OK, ""};
  DrainAhead();
  if (failed_) return *failed_;
  const std::string what = AtStep("on_poll", last_step);
  Encoder request;
  request.Put<uint64_t>(Generation()).Put<int64_t>(last_step);
  Message reply;
  if (auto failed = Call(MessageType::kPoll, request.bytes(), PluginCallPhase::kPoll, what, &reply)) return *failed;
  Decoder in(reply.payload);
  return *ReadResult(in, what);
}

}  // namespace litmus::isolation
