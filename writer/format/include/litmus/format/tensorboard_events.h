// TensorBoard event files: naming (events.out.tfevents.<seconds>.<host><suffix>), the
// `file_version: "brain.Event:2"` first record, scalar (Summary.Value.simple_value), text
// (plugin "text", a DT_STRING scalar tensor) and histogram (Summary.Value.histo) summaries, each
// Event framed as a TFRecord with a real masked CRC-32C footer, as TensorBoard checks it. Field
// use and conventions: docs/report.md "TensorBoard". Encoders are pure functions; an
// EventFileWriter is thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "litmus/format/env.h"
#include "litmus/format/tensorboard_histogram.h"
#include "litmus/status.h"

namespace litmus::tensorboard {

// The first record's file_version: with version 2 TensorBoard purges data only after a
// SessionLog START, never because a step goes back (several rules write steps out of order).
inline constexpr std::string_view kFileVersion = "brain.Event:2";
// SummaryMetadata.plugin_data.plugin_name of text summaries (TensorBoard's text plugin).
inline constexpr std::string_view kTextPluginName = "text";

// "events.out.tfevents.<unix_seconds, at least 10 digits>.<hostname><suffix>".
std::string EventFileName(int64_t unix_seconds, std::string_view hostname, std::string_view suffix);
// TensorFlow's clean_tag, as smdebug applies it to every summary tag: each character other than
// [-/A-Za-z0-9_.] becomes '_' (bytes >= 0x80 are kept: Python's \w matches non-ASCII letters),
// then leading '/' are removed ("dense/kernel:0" -> "dense/kernel_0").
std::string CleanTag(std::string_view tag);
// gethostname(), or "localhost" when it fails.
std::string HostName();
// Seconds since the epoch, with sub-second precision (Event.wall_time).
double WallTimeNow();

// Serialized Event payloads (protobuf wire format; proto/event.proto and summary.proto).
std::string EncodeFileVersionEvent(double wall_time);
// Event{wall_time, step, summary{value{tag, simple_value}}}.
std::string EncodeScalarEvent(double wall_time, int64_t step, std::string_view tag, float value);
// Event{wall_time, step, summary{value{tag, metadata{plugin_data{plugin_name: "text"}},
// tensor{dtype: DT_STRING, tensor_shape: {} (a scalar), string_val: [text]}}}}.
std::string EncodeTextEvent(double wall_time, int64_t step, std::string_view tag, std::string_view text);
// Event{wall_time, step, summary{value{tag, histo{min, max, num, sum, sum_squares,
// bucket_limit, bucket}}}} (TensorFlow 1's tf.summary.histogram).
std::string EncodeHistogramEvent(double wall_time, int64_t step, std::string_view tag, const Histogram& histogram);

// Appends events to one new event file. Records are buffered until Flush, or until the buffer
// holds kFlushBytes, and written with one append of whole records (a live TensorBoard sees whole
// records only). A write that fails inside an Add* is reported by the next Flush or Close.
// Thread-compatible.
class EventFileWriter {
 public:
  // What the buffer may hold before an Add* writes it: a run publishing hundreds of points a
  // step would otherwise grow one string to tens of MB (copied at each doubling, its fresh pages
  // faulted in) between two Flushes.
  static constexpr size_t kFlushBytes = size_t{1} << 20;

  // Creates `dir` (mkdir -p) and a new file EventFileName(now, HostName(), suffix) in it (never
  // an existing one: on a name clash ".<n>" goes before the suffix), holding the file_version
  // record. Errors are the Env's (they name the folder or file). `env` is not owned and must outlive the writer.
  static StatusOr<std::unique_ptr<EventFileWriter>> Create(Env* env, const std::string& dir, std::string_view suffix);
  // Creates (or truncates) the file `path` under a name the caller chose; its folder must exist.
  // The file_version record is buffered with the others, so the first Flush writes the file
  // whole. Errors are the Env's. `env` is not owned and must outlive the writer.
  static StatusOr<std::unique_ptr<EventFileWriter>> CreateAt(Env* env, const std::string& path);
  ~EventFileWriter();  // closes (without a final Flush: call Flush or Close first)

  // Buffered; written at the next Flush. `wall_time` 0 means now.
  void AddScalar(int64_t step, std::string_view tag, float value, double wall_time = 0);
  void AddText(int64_t step, std::string_view tag, std::string_view text, double wall_time = 0);
  void AddHistogram(int64_t step, std::string_view tag, const Histogram& histogram, double wall_time = 0);
  // Appends what is buffered (dropped on failure: never written twice). Errors name the file;
  // an earlier failed write inside an Add* is returned first.
  Status Flush();
  // Flushes and closes; idempotent.
  Status Close();

  const std::string& path() const { return path_; }
  size_t buffered_bytes() const { return buffer_.size(); }

 private:
  EventFileWriter(std::string path, std::unique_ptr<WritableFile> file);
  void AddRecord(std::string_view payload);
  // After a record was added: writes the buffer once it holds kFlushBytes.
  void FlushIfFull();

  std::string path_;
  std::unique_ptr<WritableFile> file_;
  std::string buffer_;  // framed records not yet written
  bool closed_ = false;
  Status deferred_;  // the first failed write inside an Add*, until Flush or Close returns it
};

}  // namespace litmus::tensorboard
