// The rule worker's main loop (see rule_worker.h). Single-threaded.
#include "isolation/rule_worker.h"

#include <signal.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "isolation/progress_slot.h"
#include "isolation/protocol.h"
#include "isolation/requirement_history.h"
#include "isolation/shared_arena.h"
#include "isolation/worker_host_api.h"
#include "isolation/worker_process.h"
#include "plugin/host_api.h"
#include "plugin/plugin_loader.h"
#include "plugin/rule_instance.h"

namespace litmus::isolation {
namespace {

constexpr const char* kWorkerCommand = "__rule-worker";

WorkerConnection* g_connection = nullptr;

// The worker's private data memory (VmData) before the plugin loads, in bytes; 0 if unknown.
// The memory limit is added to it: RLIMIT_DATA counts every private writable mapping, and what
// the worker itself maps before any plugin code runs (libraries, and under AddressSanitizer its
// terabytes of shadow memory, which would make every later mapping fail) is not the rule's.
uint64_t DataMemoryInUse() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmData:") {
      uint64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(4096, '\n');
  }
  return 0;
}

// operator new failed (under the memory limit): note it for the runner, then fail as usual.
void OnAllocationFailure() {
  if (g_connection != nullptr) g_connection->out_of_memory = true;
  throw std::bad_alloc();
}

void PutResult(Encoder& out, const PluginCallResult& result) {
  out.Put<int32_t>(result.status).PutString(result.message);
  out.Put<uint8_t>(g_connection != nullptr && g_connection->out_of_memory ? 1 : 0);
}

// Writes requirement lists as protocol.h says: in full, or kSameRequirements when the list
// repeats the last one recorded relative to its step. Only lists of successful calls are written
// (the runner reads no list after an error), and only they are recorded.
class RequirementsWriter {
 public:
  void Put(Encoder& out, int64_t step, const PluginCallResult& result, std::vector<TensorRequirement> reqs) {
    if (result.status != LITMUS_OK) return;
    const auto& last = history_.entries();
    if (!last.empty() && RequirementHistory::IsMoved(last.back().requirements, step - last.back().step, reqs)) {
      out.Put<uint64_t>(kSameRequirements);
    } else {
      out.Put<uint64_t>(reqs.size());
      for (const TensorRequirement& r : reqs) {
        out.Put<uint32_t>(r.trial).PutString(r.name);
        out.PutBytes(r.steps.data(), r.steps.size() * sizeof(int64_t)).Put<uint8_t>(r.reductions_only ? 1 : 0);
      }
    }
    history_.Record(step, std::move(reqs));
  }
  // Whether `reqs` of a call that succeeded are the list recorded at `reference` moved to `step`
  // (a kInvokeSteps step whose list the runner predicted so): then they are recorded, as the
  // runner records them.
  bool Confirm(int64_t step, int64_t reference, const PluginCallResult& result, std::vector<TensorRequirement> reqs) {
    if (result.status != LITMUS_OK) return false;
    const std::vector<TensorRequirement>* base = history_.At(reference);
    if (base == nullptr || !RequirementHistory::IsMoved(*base, step - reference, reqs)) return false;
    history_.Record(step, std::move(reqs));
    return true;
  }

 private:
  RequirementHistory history_;
};

int Serve(Channel& channel) {
  Message init;
  if (channel.Receive(&init) != Channel::Failure::kNone || init.type != MessageType::kInit) return 2;
  Decoder in(init.payload);
  const std::string plugin_path = in.GetString();
  const std::string rule_name = in.GetString();
  const std::string configuration_name = in.GetString();
  const uint32_t trial_count = in.Get<uint32_t>();
  const uint64_t memory_limit = in.Get<uint64_t>();
  const uint64_t generation = in.Get<uint64_t>();
  const int32_t log_level = in.Get<int32_t>();
  std::map<std::string, std::string> params;
  const uint64_t param_count = in.Get<uint64_t>();
  for (uint64_t i = 0; i < param_count && !in.failed(); ++i) {
    std::string key = in.GetString();
    params[key] = in.GetString();
  }
  const bool allow_unknown_params = in.Get<uint8_t>() != 0;
  const bool keep_series = in.Get<uint8_t>() != 0;
  if (in.failed()) return 2;

  auto reply_init = [&](const Status& status, const std::vector<std::string>& warnings, bool polls) {
    Encoder out;
    out.Put<int32_t>(static_cast<int32_t>(status.code())).PutString(status.message());
    out.Put<uint64_t>(warnings.size());
    for (const std::string& w : warnings) out.PutString(w);
    out.Put<uint8_t>(polls ? 1 : 0);
    out.Put<uint8_t>(g_connection != nullptr && g_connection->out_of_memory ? 1 : 0);
    if (g_connection != nullptr) g_connection->FlushSeries();
    return channel.Send(MessageType::kInitReply, out.bytes()) == Channel::Failure::kNone;
  };

  // The limit holds before the plugin's code (its static constructors included) runs.
  if (memory_limit > 0) {
    const rlim_t cap = static_cast<rlim_t>(DataMemoryInUse() + memory_limit);
    const rlimit limit{cap, cap};
    setrlimit(RLIMIT_DATA, &limit);
  }
  std::set_new_handler(OnAllocationFailure);
  StatusOr<std::unique_ptr<ReadOnlyMapping>> arena = ReadOnlyMapping::Map(kWorkerArenaFd);
  if (!arena.ok()) {
    reply_init(arena.status(), {}, false);
    return 2;
  }
  StatusOr<std::unique_ptr<ProgressSlot>> progress = ProgressSlot::Map(kWorkerProgressFd);
  if (!progress.ok()) {
    reply_init(progress.status(), {}, false);
    return 2;
  }
  WorkerConnection connection(&channel, std::move(arena).value(), trial_count);
  connection.log_level = log_level;
  connection.keep_series = keep_series;
  g_connection = &connection;
  SetPluginHostApi(WorkerHostApi(&connection));
  connection.BeginRequest(generation);

  PluginRegistry registry;
  if (Status s = registry.LoadFile(plugin_path); !s.ok()) {
    reply_init(s, {}, false);
    return 0;
  }
  StatusOr<const LoadedRule*> rule = registry.FindRule(rule_name);
  if (!rule.ok()) {
    reply_init(rule.status(), {}, false);
    return 0;
  }
  std::vector<std::string> warnings;
  StatusOr<std::unique_ptr<RuleInstance>> created = RuleInstance::Create(
      **rule, configuration_name, std::vector<Trial*>(trial_count, nullptr), params, &warnings, allow_unknown_params);
  if (!created.ok()) {
    reply_init(created.status(), warnings, false);
    return 0;
  }
  std::unique_ptr<RuleInstance> instance = std::move(created).value();
  if (!reply_init(OkStatus(), warnings, instance->polls())) return 0;

  Message request;  // reused, as the reply buffer
  Encoder out;
  RequirementsWriter requirements;
  // set_required_tensors of the step the runner declares next, after the reply to an invoke,
  // while the runner does other work (side-effect free by the ABI's contract, so running it early
  // changes nothing). False when the runner is gone.
  const auto run_ahead = [&](uint64_t generation, int64_t ahead_step) {
    connection.BeginRequest(generation);
    std::vector<TensorRequirement> reqs;
    Encoder next;
    next.Put<int64_t>(ahead_step);
    const PluginCallResult result = instance->RequiredTensors(ahead_step, &reqs);
    PutResult(next, result);
    requirements.Put(next, ahead_step, result, std::move(reqs));
    return channel.Send(MessageType::kAheadReply, next.bytes()) == Channel::Failure::kNone;
  };
  while (true) {
    if (channel.Receive(&request) != Channel::Failure::kNone) return 0;  // the runner is gone
    Decoder req(request.payload);
    out.Clear();
    switch (request.type) {
      case MessageType::kRequiredTensors: {
        connection.BeginRequest(req.Get<uint64_t>());
        const int64_t step = req.Get<int64_t>();
        std::vector<TensorRequirement> reqs;
        const PluginCallResult result = instance->RequiredTensors(step, &reqs);
        PutResult(out, result);
        requirements.Put(out, step, result, std::move(reqs));
        break;
      }
      case MessageType::kRequiredTensorsSteps: {
        const uint64_t generation = req.Get<uint64_t>();
        const uint64_t count = req.Get<uint64_t>();
        Encoder results;
        uint64_t declared = 0;
        while (declared < count && !req.failed()) {
          connection.BeginRequest(generation);
          const int64_t step = req.Get<int64_t>();
          if (req.failed()) break;
          (*progress)->Set(ProgressSlot::Call::kSetRequiredTensors, step);  // (where a crash was)
          std::vector<TensorRequirement> reqs;
          const PluginCallResult result = instance->RequiredTensors(step, &reqs);
          PutResult(results, result);
          requirements.Put(results, step, result, std::move(reqs));
          ++declared;
          if (!SkipsTheStep(result.status)) break;  // (its list, or an error: the runner goes on from it)
        }
        if (req.failed()) return 3;
        out.Put<uint64_t>(declared).PutRaw(results.bytes());
        break;
      }
      case MessageType::kInvoke: {
        const uint64_t generation = req.Get<uint64_t>();
        connection.BeginRequest(generation);
        const int64_t step = req.Get<int64_t>();
        if (!connection.ReadLocalTensors(req)) return 3;
        const bool ahead = req.Get<uint8_t>() != 0;
        const int64_t ahead_step = req.Get<int64_t>();
        if (!connection.ReadAnswersAhead(req) || req.failed()) return 3;
        PutResult(out, instance->Invoke(step));
        connection.FlushSeries();
        if (channel.Send(MessageType::kReply, out.bytes()) != Channel::Failure::kNone) return 0;
        if (ahead && !run_ahead(generation, ahead_step)) return 0;
        continue;
      }
      case MessageType::kInvokeSteps: {
        const uint64_t generation = req.Get<uint64_t>();
        const uint64_t count = req.Get<uint64_t>();
        const bool past_firings = req.Get<uint8_t>() != 0;
        Encoder results;
        uint64_t ran = 0;
        for (; ran < count && !req.failed(); ++ran) {
          connection.BeginRequest(generation);
          const int64_t step = req.Get<int64_t>();
          const int64_t reference = req.Get<int64_t>();
          const bool invoke = req.Get<uint8_t>() != 0;
          if (!connection.ReadLocalTensors(req) || !connection.ReadAnswersAhead(req) || req.failed()) return 3;
          if (ran > 0) {
            (*progress)->Set(ProgressSlot::Call::kSetRequiredTensors, step);
            std::vector<TensorRequirement> reqs;
            const PluginCallResult declared = instance->RequiredTensors(step, &reqs);
            if (!requirements.Confirm(step, reference, declared, std::move(reqs))) break;
          }
          if (!invoke) {  // (the runner skips it: a required tensor is missing)
            PutResult(results, PluginCallResult{LITMUS_OK, ""});
            (*progress)->Finished(ran, false);
            continue;
          }
          (*progress)->Set(ProgressSlot::Call::kInvokeAtStep, step);
          const PluginCallResult result = instance->Invoke(step);
          PutResult(results, result);
          if (result.status != LITMUS_OK && !(past_firings && result.status == LITMUS_CONDITION_MET)) {
            ++ran;
            break;
          }
          (*progress)->Finished(ran, result.status == LITMUS_CONDITION_MET);
        }
        if (req.failed()) return 3;
        // The ahead pair is after every step's part: the worker skipped the parts it did not run.
        if (ran < count) {
          out.Put<uint64_t>(ran).PutRaw(results.bytes());
          break;
        }
        const bool ahead = req.Get<uint8_t>() != 0;
        const int64_t ahead_step = req.Get<int64_t>();
        if (req.failed()) return 3;
        out.Put<uint64_t>(ran).PutRaw(results.bytes());
        connection.FlushSeries();
        if (channel.Send(MessageType::kReply, out.bytes()) != Channel::Failure::kNone) return 0;
        if (ahead && !run_ahead(generation, ahead_step)) return 0;
        continue;
      }
      case MessageType::kPoll: {
        connection.BeginRequest(req.Get<uint64_t>());
        PutResult(out, instance->Poll(req.Get<int64_t>()));
        break;
      }
      case MessageType::kDestroy:
        instance.reset();
        return 0;
      default:
        return 3;
    }
    if (req.failed()) return 3;
    connection.FlushSeries();
    if (channel.Send(MessageType::kReply, out.bytes()) != Channel::Failure::kNone) return 0;
  }
}

}  // namespace

bool IsRuleWorkerCommand(int argc, char** argv) { return argc >= 2 && std::strcmp(argv[1], kWorkerCommand) == 0; }

int RunRuleWorker(int argc, char** argv) {
  // Die with the runner (even a runner killed with SIGKILL), and never outlive a parent that
  // died before this line.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (argc < 3 || std::to_string(getppid()) != argv[2]) return 2;
  signal(SIGPIPE, SIG_IGN);
  // Everything the worker prints goes to its log file (stdout and stderr are that pipe).
  auto logger = spdlog::stderr_logger_mt("litmus-rule-worker");
  spdlog::set_default_logger(logger);
  if (argc < 4 || std::strcmp(argv[3], RuleWorkerBuild()) != 0) {
    spdlog::error("this rule worker (litmus {}) was started by another litmus ({}): install litmus and its "
                  "litmus-rule-worker together",
                  RuleWorkerBuild(), argc < 4 ? "an older one" : argv[3]);
    return kWorkerExitWrongBuild;
  }
  Channel channel(kWorkerSocketFd);
  const int code = Serve(channel);
  // No static destructors, no waiting for threads a plugin may have started.
  _exit(code);
}

}  // namespace litmus::isolation
