// TensorBoard event files: hand-written protobuf wire encoding of the few Event/Summary fields
// TensorBoard reads (so the library stays free of generated code, like event_codec.cc), framed by
// tfrecord::FrameRecord with real payload CRCs.
#include "litmus/format/tensorboard_events.h"

#include <unistd.h>

#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "litmus/format/crc32c.h"
#include "litmus/format/tfrecord.h"

namespace litmus::tensorboard {
namespace {

// Protobuf wire types.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kLengthDelimited = 2;
constexpr uint32_t kFixed32 = 5;

// Field numbers (TensorFlow's; proto/event.proto, summary.proto, tensor.proto).
constexpr uint32_t kEventWallTime = 1, kEventStep = 2, kEventFileVersion = 3, kEventSummary = 5;
constexpr uint32_t kSummaryValue = 1;
constexpr uint32_t kValueTag = 1, kValueSimpleValue = 2, kValueHisto = 5, kValueTensor = 8, kValueMetadata = 9;
constexpr uint32_t kMetadataPluginData = 1, kPluginDataPluginName = 1;
constexpr uint32_t kTensorDtype = 1, kTensorShape = 2, kTensorStringVal = 8;
constexpr uint64_t kDtString = 7;  // types.proto DT_STRING
constexpr uint32_t kHistoMin = 1, kHistoMax = 2, kHistoNum = 3, kHistoSum = 4, kHistoSumSquares = 5,
                   kHistoBucketLimit = 6, kHistoBucket = 7;

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
size_t VarintSize(uint64_t v) {
  size_t size = 1;
  for (; v >= 0x80; v >>= 7) ++size;
  return size;
}
void PutKey(std::string& out, uint32_t field, uint32_t wire_type) { PutVarint(out, (field << 3) | wire_type); }
void PutFixed(std::string& out, uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(bits >> (8 * i)));
}
void PutBytes(std::string& out, uint32_t field, std::string_view bytes) {
  PutKey(out, field, kLengthDelimited);
  PutVarint(out, bytes.size());
  out.append(bytes);
}

void PutDouble(std::string& out, uint32_t field, double value) {
  PutKey(out, field, kFixed64);
  PutFixed(out, std::bit_cast<uint64_t>(value), 8);
}
// A packed repeated double (proto3's default encoding for it): one length-delimited field.
void PutPackedDoubles(std::string& out, uint32_t field, const std::vector<double>& values) {
  std::string packed;
  packed.reserve(8 * values.size());
  for (double v : values) PutFixed(packed, std::bit_cast<uint64_t>(v), 8);
  PutBytes(out, field, packed);
}

// Event{wall_time, step (omitted when 0, as proto3 does)} + the rest.
std::string EventHead(double wall_time, int64_t step) {
  std::string out;
  PutKey(out, kEventWallTime, kFixed64);
  PutFixed(out, std::bit_cast<uint64_t>(wall_time), 8);
  if (step != 0) {
    PutKey(out, kEventStep, kVarint);
    PutVarint(out, static_cast<uint64_t>(step));  // int64: negative steps as 10-byte varints
  }
  return out;
}

// Event{..., summary{value{<value>}}}.
std::string WithSummaryValue(std::string event, const std::string& value) {
  std::string summary;
  PutBytes(summary, kSummaryValue, value);
  PutBytes(event, kEventSummary, summary);
  return event;
}

}  // namespace

std::string EventFileName(int64_t unix_seconds, std::string_view hostname, std::string_view suffix) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%010lld", static_cast<long long>(unix_seconds));
  std::string name = "events.out.tfevents.";
  name += seconds;
  name += '.';
  name += hostname;
  name += suffix;
  return name;
}

std::string CleanTag(std::string_view tag) {
  std::string out;
  out.reserve(tag.size());
  for (char c : tag) {
    const auto u = static_cast<unsigned char>(c);
    const bool keep = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
                      c == '_' || c == '-' || c == '/' || c == '.' || u >= 0x80;
    out.push_back(keep ? c : '_');
  }
  const size_t start = out.find_first_not_of('/');
  return start == std::string::npos ? std::string() : out.substr(start);
}

std::string HostName() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0 || name[0] == '\0') return "localhost";
  return std::string(name.data());
}

double WallTimeNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string EncodeFileVersionEvent(double wall_time) {
  std::string event = EventHead(wall_time, 0);
  PutBytes(event, kEventFileVersion, kFileVersion);
  return event;
}

std::string EncodeScalarEvent(double wall_time, int64_t step, std::string_view tag, float value) {
  std::string v;
  PutBytes(v, kValueTag, tag);
  PutKey(v, kValueSimpleValue, kFixed32);
  PutFixed(v, std::bit_cast<uint32_t>(value), 4);
  return WithSummaryValue(EventHead(wall_time, step), v);
}

std::string EncodeTextEvent(double wall_time, int64_t step, std::string_view tag, std::string_view text) {
  std::string plugin_data;
  PutBytes(plugin_data, kPluginDataPluginName, kTextPluginName);
  std::string metadata;
  PutBytes(metadata, kMetadataPluginData, plugin_data);
  std::string tensor;
  PutKey(tensor, kTensorDtype, kVarint);
  PutVarint(tensor, kDtString);
  PutBytes(tensor, kTensorShape, "");  // no dims: a scalar string
  PutBytes(tensor, kTensorStringVal, text);
  std::string v;
  PutBytes(v, kValueTag, tag);
  PutBytes(v, kValueTensor, tensor);
  PutBytes(v, kValueMetadata, metadata);
  return WithSummaryValue(EventHead(wall_time, step), v);
}

std::string EncodeHistogramEvent(double wall_time, int64_t step, std::string_view tag, const Histogram& histogram) {
  std::string histo;
  PutDouble(histo, kHistoMin, histogram.min);
  PutDouble(histo, kHistoMax, histogram.max);
  PutDouble(histo, kHistoNum, histogram.num);
  PutDouble(histo, kHistoSum, histogram.sum);
  PutDouble(histo, kHistoSumSquares, histogram.sum_squares);
  PutPackedDoubles(histo, kHistoBucketLimit, histogram.bucket_limit);
  PutPackedDoubles(histo, kHistoBucket, histogram.bucket);
  std::string v;
  PutBytes(v, kValueTag, tag);
  PutBytes(v, kValueHisto, histo);
  return WithSummaryValue(EventHead(wall_time, step), v);
}

StatusOr<std::unique_ptr<EventFileWriter>> EventFileWriter::CreateAt(Env* env, const std::string& path) {
  LITMUS_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, env->NewWritableFile(path));
  std::unique_ptr<EventFileWriter> writer(new EventFileWriter(path, std::move(file)));
  writer->AddRecord(EncodeFileVersionEvent(WallTimeNow()));
  return writer;
}

StatusOr<std::unique_ptr<EventFileWriter>> EventFileWriter::Create(Env* env, const std::string& dir,
                                                                    std::string_view suffix) {
  LITMUS_RETURN_IF_ERROR(env->CreateDirs(dir));  // (Env errors name the path)
  const double now = WallTimeNow();
  const std::string host = HostName();
  const int64_t seconds = static_cast<int64_t>(now);
  for (int attempt = 0;; ++attempt) {
    std::string tail;
    if (attempt > 0) {
      tail += '.';
      tail += std::to_string(attempt);
    }
    tail += suffix;
    const std::string path = Env::JoinPath(dir, EventFileName(seconds, host, tail));
    StatusOr<std::unique_ptr<WritableFile>> file = env->NewExclusiveFile(path);
    if (!file.ok() && file.status().code() == StatusCode::kAlreadyExists && attempt < 1000) continue;
    if (!file.ok()) return file.status();
    std::unique_ptr<EventFileWriter> writer(new EventFileWriter(path, std::move(file).value()));
    writer->AddRecord(EncodeFileVersionEvent(now));
    LITMUS_RETURN_IF_ERROR(writer->Flush());
    return writer;
  }
}

EventFileWriter::EventFileWriter(std::string path, std::unique_ptr<WritableFile> file)
    : path_(std::move(path)), file_(std::move(file)) {}

EventFileWriter::~EventFileWriter() {
  if (!closed_) (void)file_->Close();
}

void EventFileWriter::AddRecord(std::string_view payload) {
  buffer_ += tfrecord::FrameRecord(payload, tfrecord::FooterKind::kPayloadCrc);
  FlushIfFull();
}

void EventFileWriter::FlushIfFull() {
  if (buffer_.size() < kFlushBytes || closed_) return;
  const Status status = file_->Append(std::as_bytes(std::span(buffer_.data(), buffer_.size())));
  buffer_.clear();  // (as Flush: never written twice)
  if (!status.ok() && deferred_.ok()) deferred_ = status;
}

void EventFileWriter::AddScalar(int64_t step, std::string_view tag, float value, double wall_time) {
  // The framed record of EncodeScalarEvent, written in place at the buffer's end: the runner
  // writes one per published point (hundreds per step), and the nested temporary strings of
  // the general encoders showed in profiles.
  const size_t value_size = 1 + VarintSize(tag.size()) + tag.size() + 1 + 4;
  const size_t summary_size = 1 + VarintSize(value_size) + value_size;
  const size_t event_size = 1 + 8 + (step != 0 ? 1 + VarintSize(static_cast<uint64_t>(step)) : 0) + 1 +
                            VarintSize(summary_size) + summary_size;
  const size_t at = buffer_.size();
  buffer_.resize(at + tfrecord::kHeaderSize + event_size + tfrecord::kFooterSize);
  auto* const record = reinterpret_cast<std::byte*>(buffer_.data() + at);
  tfrecord::EncodeHeader(event_size, record);
  char* const payload = buffer_.data() + at + tfrecord::kHeaderSize;
  char* p = payload;
  const auto varint = [&p](uint64_t v) {
    for (; v >= 0x80; v >>= 7) *p++ = static_cast<char>((v & 0x7F) | 0x80);
    *p++ = static_cast<char>(v);
  };
  const auto fixed = [&p](uint64_t bits, int bytes) {
    for (int i = 0; i < bytes; ++i) *p++ = static_cast<char>(bits >> (8 * i));
  };
  // (Every field number here is below 16: each key is one byte.)
  *p++ = static_cast<char>(kEventWallTime << 3 | kFixed64);
  fixed(std::bit_cast<uint64_t>(wall_time != 0 ? wall_time : WallTimeNow()), 8);
  if (step != 0) {
    *p++ = static_cast<char>(kEventStep << 3 | kVarint);
    varint(static_cast<uint64_t>(step));
  }
  *p++ = static_cast<char>(kEventSummary << 3 | kLengthDelimited);
  varint(summary_size);
  *p++ = static_cast<char>(kSummaryValue << 3 | kLengthDelimited);
  varint(value_size);
  *p++ = static_cast<char>(kValueTag << 3 | kLengthDelimited);
  varint(tag.size());
  if (!tag.empty()) std::memcpy(p, tag.data(), tag.size());
  p += tag.size();
  *p++ = static_cast<char>(kValueSimpleValue << 3 | kFixed32);
  fixed(std::bit_cast<uint32_t>(value), 4);
  tfrecord::EncodeFooter(tfrecord::FooterKind::kPayloadCrc, crc32c::Value(payload, event_size),
                         reinterpret_cast<std::byte*>(p));
  FlushIfFull();
}

void EventFileWriter::AddText(int64_t step, std::string_view tag, std::string_view text, double wall_time) {
  AddRecord(EncodeTextEvent(wall_time != 0 ? wall_time : WallTimeNow(), step, tag, text));
}

void EventFileWriter::AddHistogram(int64_t step, std::string_view tag, const Histogram& histogram,
                                   double wall_time) {
  AddRecord(EncodeHistogramEvent(wall_time != 0 ? wall_time : WallTimeNow(), step, tag, histogram));
}

Status EventFileWriter::Flush() {
  if (closed_) return FailedPreconditionError(path_ + ": written after Close");
  Status appended = OkStatus();
  if (!buffer_.empty()) {
    appended = file_->Append(std::as_bytes(std::span(buffer_.data(), buffer_.size())));
    buffer_.clear();  // never written twice: a failed append leaves the file's end unknown
  }
  if (!deferred_.ok()) return std::exchange(deferred_, OkStatus());
  return appended;
}

Status EventFileWriter::Close() {
  if (closed_) return OkStatus();
  Status flushed = Flush();
  closed_ = true;
  const Status closed = file_->Close();
  if (!flushed.ok()) return flushed;
  return closed;
}

}  // namespace litmus::tensorboard
