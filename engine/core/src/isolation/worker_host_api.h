// The host table of a rule worker process: the same C ABI as the runner's (plugin/host_api.h), so
// plugins run unchanged, over a WorkerConnection to the runner. set_error, alloc/free and
// trial_count are local; log and report_* are one-way notes the runner applies with its own host
// functions; catalog queries are asked once per trial generation and cached; tensor_value and
// tensor_reduction of the required tensors the runner listed with the call are answered from the
// shared tensor memory; everything else is one round trip to the runner's host functions, which
// keeps every check and message identical. Thread-safety: one plugin call at a time (the worker
// has one rule instance).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "isolation/protocol.h"
#include "isolation/shared_arena.h"
#include "isolation/step_table.h"
#include "litmus/rule_abi.h"
#include "plugin/host_api.h"

namespace litmus::isolation {

// A required tensor of the current call whose raw value is in the shared memory.
struct LocalTensor {
  uint32_t trial = 0;
  int64_t step = 0;
  const std::byte* data = nullptr;
  uint64_t bytes = 0;
  bool summary_only = false;  // no data: only the memos (the runner kept a summary; kSummaryOnly)
  int32_t dtype = 0;
  const int64_t* shape = nullptr;  // rank entries (in the connection's shape buffer)
  uint32_t rank = 0;
  int32_t next = -1;               // the next entry of the same name (-1: none)
  uint32_t name_id = 0;
  int64_t num_elements = 0;
  int32_t mode = 0;
  int64_t mode_step = 0;
  // Reductions the runner had computed (no stored reductions at this entry): bit 2*r+abs.
  uint32_t memo_mask = 0;
  std::array<double, 18> memos{};
};

// A runner's answer to a query.
struct QueryAnswer {
  litmus_status_t status = LITMUS_INTERNAL;
  bool has_error = false;
  std::string error;
  std::string payload;  // the function's output, as the runner encoded it
  // Decoded outputs handed to the plugin (borrowed until the call returns; strs view the payload).
  // (No member allocates when empty: a worker keeps hundreds of answers a call.)
  std::vector<int64_t> ints;
  std::vector<litmus_str_t> strs;
  std::unique_ptr<std::byte[]> aligned;  // a tensor value copied through the socket
};

class WorkerConnection {
 public:
  WorkerConnection(Channel* channel, std::unique_ptr<ReadOnlyMapping> arena, uint32_t trial_count);

  // A request starts: drops cached catalog answers when `generation` differs from the last one,
  // and the previous call's answers and local tensors.
  void BeginRequest(uint64_t generation);
  // Reads the kInvoke's step table (StepTable) and the rule's own entries (after the step) from
  // `in`; false on a malformed request or table.
  bool ReadLocalTensors(Decoder& in);
  // Reads the answers the runner sent ahead with a kInvoke (query args, answer) into the cache.
  bool ReadAnswersAhead(Decoder& in);

  // Sends a query and waits for its answer; exits the process if the runner is gone (nothing
  // else is left to do: the runner has ended the rule). `cacheable` answers are kept until the
  // generation changes.
  const QueryAnswer& Query(HostFunction function, const std::string& args, bool cacheable);
  // A one-way note (kLog, kReport*); exits like Query when the runner is gone. kReport* notes
  // are queued after the batched series points (Channel::Post) and go out with the call's next
  // query or its reply, in one system call: a call that crashes loses its own reports, as it
  // loses its series points, never earlier ones. A kLog line is sent at once, ahead of them.
  void Note(MessageType type, const std::string& payload);
  // report_series (ABI 1.3): batched, a rule may publish hundreds of values per step; queued as
  // one kReportSeries note before the next message of any kind (FlushSeries before a reply).
  void AddSeriesPoint(litmus_str_t series, litmus_str_t tensor, int64_t step, double value);
  void FlushSeries();

  // Rules usually ask for their tensors in the order the runner handed them over: the entry
  // after the last one found is tried first (one comparison instead of hashing the name).
  const LocalTensor* FindLocal(uint32_t trial, std::string_view name, int64_t step);
  // [offset, offset + size) of the shared tensor memory, or nullptr if outside it.
  const std::byte* ArenaAt(uint64_t offset, uint64_t size) const { return arena_->At(offset, size); }
  uint32_t trial_count() const { return trial_count_; }

  // Names known to be saved (a saved name stays saved): require_tensor of one needs no query,
  // and the elements are the stable copies TensorRequirement::name views. (Indexed by trial.)
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  using StringSet = std::unordered_set<std::string, StringHash, std::equal_to<>>;
  std::vector<StringSet> saved_names;
  // The saved name each position of the last requirement lists held (trial, element of
  // saved_names): a rule requires the same names in the same order at every step, so the name
  // at the position being recorded is compared first, without hashing it.
  std::vector<std::pair<uint32_t, const std::string*>> saved_at_position;

  // Log lines below this LITMUS_LOG_* level are dropped here (the runner would drop them).
  int32_t log_level = 0;
  // Set when an allocation failed in the worker (new_handler, or a host function's bad_alloc).
  bool out_of_memory = false;
  // false (`litmus run --no-series`): report_series, report_threshold and report_recommendation
  // are dropped here, nothing is sent.
  bool keep_series = true;

 private:
  Channel* channel_;
  std::unique_ptr<ReadOnlyMapping> arena_;
  uint32_t trial_count_;
  std::optional<uint64_t> generation_;
  std::map<std::string, QueryAnswer, std::less<>> cache_;  // key: function id + args
  // Small: the answers sent ahead for every step of every call land here too (name lists);
  // 4096 of them grew a worker by ~15 MB between two clears, and the freed memory was faulted
  // in again (page faults were a fifth of a 20-rule job's time on a VM).
  static constexpr size_t kMaxCachedAnswers = 256;
  std::deque<QueryAnswer> call_answers_;
  std::deque<std::string> names_;  // by id
  std::vector<LocalTensor> local_;
  std::vector<int64_t> shapes_;  // the local tensors' shapes, one after the other
  std::unordered_map<std::string_view, uint32_t, StringHash, std::equal_to<>> name_ids_;  // of names_
  std::vector<int32_t> first_local_;  // by name id: its first entry in local_, or -1
  std::vector<uint32_t> touched_;     // ids whose first_local_ is set
  size_t next_local_ = 0;             // the entry after the one FindLocal found last
  // The step's shared table for this call, the rule's trial numbers in it, and the entries
  // FindLocal made of its rows: from_table_ holds at most one per row (slot_of_row_, -1 for
  // none) and is reserved for all of them, so that its addresses stay valid for the call.
  StepTableView table_;
  std::vector<uint32_t> job_trials_;
  std::vector<LocalTensor> from_table_;
  std::vector<int32_t> slot_of_row_;
  Message reply_;  // reused: its buffer keeps its capacity
  // FindLocal's lookup in the step's table (an entry of from_table_), or nullptr.
  const LocalTensor* FindInTable(uint32_t trial, std::string_view name, int64_t step);
  Encoder series_;  // batched kReportSeries points (after their count)
  uint64_t series_count_ = 0;
  // Interned (series, tensor) pairs (protocol.h "Series points"): by id, and the id of
  // (u64 size of series) + series + tensor. A rule publishes the same pairs in the same order at every step: the
  // id after the last one used is tried first (two comparisons, no hashing).
  std::vector<std::pair<std::string, std::string>> series_names_;
  std::unordered_map<std::string, uint32_t> series_ids_;
  uint32_t next_series_id_ = 0;
  std::string series_key_;  // reused lookup key
  // The id of (series, tensor), defining it in series_ if new; kSeriesRaw when not interned.
  uint32_t SeriesId(litmus_str_t series, litmus_str_t tensor);
};

// The worker's host table; `connection` serves every call (set once, before any plugin loads).
const litmus_host_api_t* WorkerHostApi(WorkerConnection* connection);

// A kQueryReply payload: status, has_error, error, the function's output.
bool DecodeAnswer(Decoder& in, QueryAnswer* answer);

// Encodes a plugin's string with its NULL-ness (a NULL pointer with a size is the plugin's error,
// which the runner's host function reports).
void PutStr(Encoder& out, litmus_str_t s);
// Decodes it: {nullptr, size} for a NULL string, else a view into the payload.
litmus_str_t GetStr(Decoder& in);

}  // namespace litmus::isolation
