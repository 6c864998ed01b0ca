// The wire protocol between the runner and a rule worker (`litmus __rule-worker`), one stream
// socket per worker. Thread-compatible: one Channel is used by one thread at a time.
//
// Format. Every message is a frame: a 16-byte header {u32 type, u32 reserved = 0, u64 length}
// followed by `length` payload bytes. Payloads are sequences of fixed-size native-endian scalars
// (both ends are the same binary on the same machine) and strings/byte blocks as {u64 size,
// bytes}. The runner sends requests (kInit, kRequiredTensors, kInvoke, kPoll, kDestroy); while it
// serves one, the worker may send one-way notes (kLog, kReport*) and
// queries (kQuery, answered by one kQueryReply each), then ends it with exactly one kReply
// (kInitReply for kInit). kDestroy has no reply: the worker destroys the instance and exits 0.
// The worker queues its kReport* notes and sends them with its next query or reply (one system
// call); both ends read whatever the socket holds at once (Channel).
// A kInvoke may ask for set_required_tensors of a later step too ("ahead"): the worker replies to
// the invoke first, then runs it and sends kAheadReply, which the runner reads (serving the
// queries that come before it) before its next request.
// Names of tensors a request hands over travel as ids: a request defines each id once (id, name)
// before using it, and ids stay valid for the worker's life.
// Requirement lists (replies to kRequiredTensors and kAheadReply, when the call succeeded): a
// count, then (trial, name, steps, reductions_only) each; or the count kSameRequirements: the
// same list as the last one recorded (RequirementHistory), every step moved by the difference
// between the two lists' steps (rules usually require the same names relative to the step at every step, and neither
// side then encodes, decodes and looks up every name again).
// Series points (kReportSeries) name their (series, tensor) pair by an id too: the first point
// of a pair carries kSeriesDefine | id and the two names (ids are 0, 1, 2, ... in the order
// defined, valid for the worker's life, at most kMaxSeriesIds of them); later points carry the
// id alone, so a rule publishing the same series at every step sends 20 bytes a point and the
// runner compares no names. Names the runner must judge one by one (an empty or NULL series
// name, a NULL tensor name) and pairs beyond kMaxSeriesIds travel as kSeriesRaw with both names.
#pragma once

#include <chrono>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "litmus/status.h"

namespace litmus::isolation {

inline constexpr uint64_t kSameRequirements = ~uint64_t{0};

// The leading u32 of a kReportSeries entry: an id, kSeriesDefine | id, or kSeriesRaw (above).
inline constexpr uint32_t kSeriesDefine = uint32_t{1} << 31;
inline constexpr uint32_t kSeriesRaw = ~uint32_t{0};
inline constexpr uint32_t kMaxSeriesIds = uint32_t{1} << 16;

enum class MessageType : uint32_t {
  kNone = 0,            // (no message: IsolatedRule::Call only receives)
  // runner -> worker
  kInit = 1,            // plugin, rule, configuration name, trial count, memory limit, generation,
                        // log level, parameters
  kRequiredTensors = 2, // CallHeader, then the step
  kInvoke = 3,          // CallHeader, then the step, the step's shared table (u8 present; offset, size and
                        // the rule's job-wide trial numbers: step_table.h), the rule's own entries
                        // of required tensors that table lacks (see isolated_rule.cc),
                        // whether to run set_required_tensors of a later step (u8, i64), and
                        // answers to queries sent ahead (count, then (query, kQueryReply payload))
  kPoll = 4,            // CallHeader, then the last step
  kDestroy = 5,         // empty
  kQueryReply = 6,      // QueryResult header, then the function's output
  kInvokeSteps = 7,     // u64 generation, u64 count, u8 past firings, then per step: its step,
                        // the step of the list its list was predicted from (i64), whether to
                        // invoke it (u8; 0: only check its list, the runner skips it), then as kInvoke
                        // from the table to the answers (without the ahead pair); then the ahead
                        // pair (u8, i64) once. The worker runs the steps in order, each (but the
                        // first) after set_required_tensors of the step returns that list moved
                        // to it (RequirementHistory: the runner predicted the list and read its
                        // tensors); it stops after a step whose invoke_at_step did not return
                        // LITMUS_OK (nor LITMUS_CONDITION_MET with past firings) and before a
                        // step whose list differs. kReply: u64 count run,
                        // then a PluginCallResult each; the ahead runs only when all ran.
  kRequiredTensorsSteps = 8,  // u64 generation, u64 count, then the steps (i64, ascending):
                        // set_required_tensors of each in order, up to the first whose status is
                        // not one of a missing tensor, step or worker (LITMUS_OK included): a
                        // rule that cannot declare its list (TreeDepth without trees) is asked
                        // about a call's steps in one round trip. kReply: u64 count declared,
                        // then each as a kRequiredTensors reply (result, list if LITMUS_OK).
  // worker -> runner
  kInitReply = 20,        // status code, message, warnings, polls, added actions
  kReply = 21,            // PluginCallResult (+ requirements for kRequiredTensors), out-of-memory flag
  kQuery = 22,            // HostFunction, then its arguments
  kLog = 23,              // level, text
  kReportViolations = 24, // count
  kReportDetail = 25,     // key, JSON text
  kAheadReply = 26,       // the step, then as kReply to kRequiredTensors
  // ABI 1.3 (one-way notes, like kReportDetail)
  kReportSeries = 27,          // count, then per point: u32 id, kSeriesDefine | id followed by
                               // the series and tensor names (u64 size, bytes each), or kSeriesRaw
                               // followed by both names as nullable strings (u8 is_null; u64 size
                               // if null, else u64 size, bytes); then i64 step, f64 value. The
                               // report_series calls of a plugin call, batched (sent before any
                               // other message)
  kReportThreshold = 28,       // series, value, fires_when
  kReportRecommendation = 29,  // text
};

// The host functions a worker forwards to the runner in a kQuery.
enum class HostFunction : uint32_t {
  kSteps = 1,
  kStepMode = 2,
  kGlobalStep = 3,
  kWorkers = 4,
  kTensorNames = 5,
  kTensorSteps = 6,
  kTensorValue = 7,
  kTensorReduction = 8,
  kTensorShape = 9,
  kRequireTensor = 10,  // validates/expands one require_tensor (no steps): the names to record
  kAddAction = 11,
};

// A query's arguments with the 8 bytes at `offset` zeroed: the template of the same query about
// any step (IsolatedRule answers remembered step queries ahead). Nullopt when the query is too
// short to hold them: a malformed query from a worker is never written past.
std::optional<std::string> QueryTemplate(std::string_view query, size_t offset);

// Appends scalars and strings to a payload.
class Encoder {
 public:
  template <class T>
  Encoder& Put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    buffer_.append(reinterpret_cast<const char*>(&value), sizeof(T));
    return *this;
  }
  Encoder& PutBytes(const void* data, size_t size);
  Encoder& PutString(std::string_view s) { return PutBytes(s.data(), s.size()); }
  // Appends another encoder's bytes as they are (no size).
  Encoder& PutRaw(std::string_view bytes) {
    buffer_.append(bytes.data(), bytes.size());
    return *this;
  }
  template <class T>
  Encoder& PutVector(const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>);
    return PutBytes(values.data(), values.size() * sizeof(T));
  }
  const std::string& bytes() const { return buffer_; }
  size_t size() const { return buffer_.size(); }
  // Overwrites what Put<T> wrote at byte `at` (a count known only after the items).
  template <class T>
  void PutAt(size_t at, T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (at <= buffer_.size() && sizeof(T) <= buffer_.size() - at) std::memcpy(buffer_.data() + at, &value, sizeof(T));
  }
  void Reserve(size_t size) { buffer_.reserve(size); }
  // Drops what was appended after the first `size` bytes.
  void Truncate(size_t size) { buffer_.resize(std::min(size, buffer_.size())); }
  std::string Take() { return std::move(buffer_); }
  void Clear() { buffer_.clear(); }

 private:
  std::string buffer_;
};

// Reads what an Encoder wrote. Reading past the end sets failed() and yields zeros/empty values,
// so a caller checks once at the end (a malformed message is a protocol error, never UB).
class Decoder {
 public:
  explicit Decoder(std::string_view payload) : data_(payload) {}
  template <class T>
  T Get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value{};
    if (data_.size() - pos_ < sizeof(T)) {
      failed_ = true;
      pos_ = data_.size();
      return value;
    }
    std::memcpy(&value, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  // A view into the payload (valid as long as it).
  std::string_view GetBytes();
  std::string GetString() { return std::string(GetBytes()); }
  template <class T>
  std::vector<T> GetVector() {
    const std::string_view bytes = GetBytes();
    if (bytes.size() % sizeof(T) != 0) {
      failed_ = true;
      return {};
    }
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }
  bool failed() const { return failed_; }
  bool at_end() const { return pos_ == data_.size(); }

 private:
  std::string_view data_;
  size_t pos_ = 0;
  bool failed_ = false;
};

struct Message {
  MessageType type{};
  std::string payload;
};

// One end of the socket. The runner's end is non-blocking and bounded by a deadline and an abort
// check; the worker's end blocks (it has nothing else to do).
class Channel {
 public:
  // Takes ownership of `fd`.
  explicit Channel(int fd) : fd_(fd) {}
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // Why a Send/Receive did not complete.
  enum class Failure { kNone, kClosed, kTimedOut, kAborted, kProtocol };
  // Gives up at `deadline` (kTimedOut) or when `abort` returns true (checked every 50 ms;
  // kAborted). Without a deadline and abort check, blocks.
  struct Limits {
    std::optional<std::chrono::steady_clock::time_point> deadline;
    std::function<bool()> abort;
  };

  // Sends one frame, after the frames Post queued (all in one system call when they are small).
  Failure Send(MessageType type, std::string_view payload, const Limits& limits = {});
  // Queues a frame to go out with the next Send (a worker's one-way notes ride with its reply:
  // one system call, not one per note). Queued frames are sent at once when they pass
  // kMaxQueued bytes. Frames queued when the process dies are lost: a worker queues only notes
  // of the call in progress, which its crash discards anyway.
  Failure Post(MessageType type, std::string_view payload, const Limits& limits = {});
  // Sends one frame now, ahead of the frames Post queued (they stay queued for the next Send):
  // for a frame that must not wait and that the peer handles on its own (a log line).
  Failure SendAhead(MessageType type, std::string_view payload, const Limits& limits = {});
  Failure Receive(Message* out, const Limits& limits = {});
  // The system error text of the last kClosed/kProtocol failure (for messages).
  const std::string& error() const { return error_; }
  int fd() const { return fd_; }

  // Largest payload accepted (a larger length is a protocol error, not an allocation).
  static constexpr uint64_t kMaxPayload = uint64_t{4} << 30;

 private:
  // Waits until fd_ is readable/writable; kNone when it is.
  Failure Wait(short events, const Limits& limits);
  Failure WriteAll(const char* data, size_t size, const Limits& limits);
  // Writes `data`, then `more`, in one system call when the socket takes them.
  Failure WriteAll(const char* data, size_t size, const char* more, size_t more_size, const Limits& limits);
  Failure ReadAll(char* data, size_t size, const Limits& limits);
  // One recv of at most `size` bytes that receives at least one (waiting for it); *received says
  // how many.
  Failure RecvSome(char* data, size_t size, size_t* received, const Limits& limits);
  // Receives into in_ until it holds at least `size` unread bytes (size <= kInBuffer), taking
  // whatever else the socket has ready too.
  Failure Fill(size_t size, const Limits& limits);

  int fd_;
  std::string error_;
  // Frames Post queued, header and payload each, in order.
  static constexpr size_t kMaxQueued = 1 << 20;
  std::string out_;
  // Bytes received but not yet handed out: in_[in_begin_, in_end_). A receive takes what the
  // socket holds, up to kInBuffer: a frame's header and payload, and often the frames after it,
  // come in one system call instead of two per frame (a call costs microseconds in a VM, and a
  // rule step exchanges several frames).
  static constexpr size_t kInBuffer = 64 * 1024;
  std::vector<char> in_;
  size_t in_begin_ = 0;
  size_t in_end_ = 0;
};

}  // namespace litmus::isolation
