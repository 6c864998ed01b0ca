// Tests of DecodeTensorRecord and Tensor: the real smdebug records of the synthetic_dtypes fixture
// against its expected.json (and the raw bytes where smdebug fails), alignment and zero copy,
// corrupt records, and TF's *_val fallbacks built with the generated protobuf classes.
#include "litmus/engine/tensor.h"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "litmus/format/event_codec.h"
#include "litmus/format/proto/event.pb.h"
#include "litmus/format/tfrecord.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
namespace pb = ::litmus::format::proto;

ByteBuffer BufferOf(std::string_view bytes) {
  ByteBuffer b = ByteBuffer::Allocate(bytes.size());
  std::memcpy(b.data.get(), bytes.data(), bytes.size());
  return b;
}

json ReadJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// One indexed record of a fixture trial, as the index addresses it.
struct FixtureRecord {
  std::string name;
  std::string file;
  uint64_t offset = 0;
  std::string bytes;
};

std::vector<FixtureRecord> ReadIndexedRecords(std::string_view trial, int64_t step) {
  const std::filesystem::path root = testing::FixturePath(trial);
  char index_name[64];
  std::snprintf(index_name, sizeof index_name, "index/000000000/%012lld_worker_0.json",
                static_cast<long long>(step));
  const json index = ReadJson(root / index_name);
  const std::string event_file = index["meta"]["event_file_name"];
  const std::string events = testing::ReadWholeFile(root / event_file);
  std::vector<FixtureRecord> out;
  for (const json& p : index["tensor_payload"]) {
    FixtureRecord r;
    r.name = p["tensorname"];
    r.file = event_file;
    r.offset = p["start_idx"];
    r.bytes = events.substr(r.offset, p["length"].get<size_t>());
    out.push_back(std::move(r));
  }
  return out;
}

StatusOr<TensorPtr> Decode(const FixtureRecord& r, bool* mismatch = nullptr) {
  return DecodeTensorRecord(BufferOf(r.bytes), r.file, r.offset, r.name, mismatch);
}

// Expected-JSON number, possibly "nan"/"inf"/"-inf".
double JsonDouble(const json& v) {
  if (v.is_string()) {
    const std::string s = v;
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    ADD_FAILURE() << "unexpected string " << s;
    return 0;
  }
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  return v.get<double>();
}

void ExpectSameDouble(double got, double want, const std::string& ctx) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << ctx << ": got " << got;
  } else {
    EXPECT_EQ(got, want) << ctx;
    EXPECT_EQ(std::signbit(got), std::signbit(want)) << ctx << " (sign of zero)";
  }
}

// Compares one decoded tensor with an expected.json `value` object that smdebug produced.
void CheckAgainstExpected(const Tensor& t, const json& want, const std::string& ctx) {
  std::vector<int64_t> shape = want["shape"].get<std::vector<int64_t>>();
  EXPECT_EQ(t.shape(), shape) << ctx;
  EXPECT_EQ(t.num_elements(), want["size"].get<int64_t>()) << ctx;
  const std::string dtype = want["dtype"];
  if (dtype.rfind("<U", 0) == 0) {
    ASSERT_TRUE(t.is_string()) << ctx;
    EXPECT_EQ(t.strings(), want["values"].get<std::vector<std::string>>()) << ctx;
    return;
  }
  ASSERT_FALSE(t.is_string()) << ctx;
  const bool smdebug_int8_bug = t.dtype() == DType::kInt8;  // smdebug reads DT_INT8 as uint8
  EXPECT_EQ(DTypeName(t.dtype()), smdebug_int8_bug ? std::string("int8") : dtype) << ctx;
  if (smdebug_int8_bug) {
    EXPECT_EQ(dtype, "uint8") << ctx;
  }
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.bytes().data()) % DTypeSize(t.dtype()), 0u) << ctx;
  EXPECT_EQ(t.bytes().size(), static_cast<size_t>(t.num_elements()) * DTypeSize(t.dtype())) << ctx;

  if (want.contains("values")) {
    const json& values = want["values"];
    ASSERT_EQ(values.size(), static_cast<size_t>(t.num_elements())) << ctx;
    for (size_t i = 0; i < values.size(); ++i) {
      const std::string at = ctx + "[" + std::to_string(i) + "]";
      const json& v = values[i];
      switch (t.dtype()) {
        case DType::kInt64: EXPECT_EQ(t.as<int64_t>()[i], v.get<int64_t>()) << at; break;
        case DType::kUInt64: EXPECT_EQ(t.as<uint64_t>()[i], v.get<uint64_t>()) << at; break;
        case DType::kInt8:
          EXPECT_EQ(t.as<int8_t>()[i], static_cast<int8_t>(v.get<uint8_t>())) << at;
          EXPECT_EQ(t.ElementAsDouble(static_cast<int64_t>(i)), t.as<int8_t>()[i]) << at;
          break;
        case DType::kComplex64:
        case DType::kComplex128: {
          const std::complex<double> z = t.ElementAsComplex(static_cast<int64_t>(i));
          ExpectSameDouble(z.real(), JsonDouble(v["re"]), at + ".re");
          ExpectSameDouble(z.imag(), JsonDouble(v["im"]), at + ".im");
          ExpectSameDouble(t.ElementAsDouble(static_cast<int64_t>(i)), JsonDouble(v["re"]), at);
          break;
        }
        case DType::kFloat32:
        case DType::kFloat64:
        case DType::kInt32:
        case DType::kUInt8:
        case DType::kInt16:
        case DType::kBool:
        case DType::kUInt16:
        case DType::kFloat16:
        case DType::kUInt32:
        case DType::kInvalid:
        case DType::kString:
          ExpectSameDouble(t.ElementAsDouble(static_cast<int64_t>(i)), JsonDouble(v), at);
          ExpectSameDouble(t.ElementAsComplex(static_cast<int64_t>(i)).real(), JsonDouble(v), at);
          EXPECT_EQ(t.ElementAsComplex(static_cast<int64_t>(i)).imag(), 0.0) << at;
          break;
      }
    }
  }
  if (want.contains("nan_count")) {
    int64_t nan = 0, posinf = 0, neginf = 0;
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      const std::complex<double> z = t.ElementAsComplex(i);
      nan += std::isnan(z.real()) || std::isnan(z.imag());
      posinf += z.real() == INFINITY || z.imag() == INFINITY;
      neginf += z.real() == -INFINITY || z.imag() == -INFINITY;
    }
    EXPECT_EQ(nan, want["nan_count"].get<int64_t>()) << ctx;
    EXPECT_EQ(posinf, want["posinf_count"].get<int64_t>()) << ctx;
    EXPECT_EQ(neginf, want["neginf_count"].get<int64_t>()) << ctx;
  }
}

// Every record smdebug could read at steps 0..2 decodes to what smdebug returned.
// Memos: the first value set for a key stays; keys beyond the few kept in place work the same.
TEST(TensorMemoTest, FirstValueWinsForEveryKey) {
  const std::vector<float> values{1.0f, -2.0f};
  const Tensor tensor(DType::kFloat32, {2}, std::as_bytes(std::span(values)), nullptr);
  EXPECT_FALSE(tensor.Memo(0).has_value());
  for (uint32_t key = 0; key < 10; ++key) tensor.SetMemo(key * 3, 100.0 + key);
  for (uint32_t key = 0; key < 10; ++key) tensor.SetMemo(key * 3, -1.0);  // ignored: already set
  for (uint32_t key = 0; key < 10; ++key) {
    ASSERT_TRUE(tensor.Memo(key * 3).has_value()) << key;
    EXPECT_EQ(*tensor.Memo(key * 3), 100.0 + key) << key;
    EXPECT_FALSE(tensor.Memo(key * 3 + 1).has_value()) << key;
  }
}

TEST(DecodeTensorRecordTest, SyntheticDtypesMatchExpectedJson) {
  const json expected = ReadJson(testing::FixturePath("synthetic_dtypes").string() + ".expected.json");
  int compared = 0;
  for (int64_t step : {0, 1, 2}) {
    for (const FixtureRecord& r : ReadIndexedRecords("synthetic_dtypes", step)) {
      const std::string ctx = r.name + "@" + std::to_string(step);
      bool mismatch = true;
      LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr t, Decode(r, &mismatch));
      EXPECT_FALSE(mismatch) << ctx;
      const json& want =
          expected["tensors"][r.name]["per_step"][std::to_string(step)]["by_worker"]["worker_0"]["value"];
      if (want.is_object() && !want.contains("error")) {
        CheckAgainstExpected(*t, want, ctx);
        ++compared;
      }
    }
  }
  // 19 tensors smdebug could read at steps 0 and 2 (with large/float32), 18 at step 1.
  EXPECT_EQ(compared, 19 + 18 + 19);
}

std::map<std::string, TensorPtr> DecodeStep(int64_t step) {
  std::map<std::string, TensorPtr> out;
  for (const FixtureRecord& r : ReadIndexedRecords("synthetic_dtypes", step)) {
    StatusOr<TensorPtr> t = Decode(r);
    EXPECT_TRUE(t.ok()) << r.name << ": " << t.status().ToString();
    if (t.ok()) out[r.name] = *t;
  }
  return out;
}

// Where smdebug fails (KeyError, empty tensors, int8 as uint8), litmus decodes correctly; the
// wanted values come from the raw tensor_content bytes of the fixture.
TEST(DecodeTensorRecordTest, SyntheticDtypesWhereSmdebugFails) {
  std::map<std::string, TensorPtr> t = DecodeStep(0);
  ASSERT_EQ(t.size(), 27u);

  EXPECT_EQ(t["dtypes/int8"]->dtype(), DType::kInt8);
  EXPECT_THAT(std::vector<int8_t>(t["dtypes/int8"]->as<int8_t>().begin(), t["dtypes/int8"]->as<int8_t>().end()),
              ::testing::ElementsAre(-128, -1, 0, 1, 127, 0));

  auto ints = [](const TensorPtr& p) {
    std::vector<double> v;
    for (int64_t i = 0; i < p->num_elements(); ++i) v.push_back(p->ElementAsDouble(i));
    return v;
  };
  EXPECT_EQ(t["exotic/int16"]->dtype(), DType::kInt16);
  EXPECT_THAT(ints(t["exotic/int16"]), ::testing::ElementsAre(-300, 0, 300));
  EXPECT_EQ(t["exotic/uint16"]->dtype(), DType::kUInt16);
  EXPECT_THAT(ints(t["exotic/uint16"]), ::testing::ElementsAre(0, 65535));
  EXPECT_EQ(t["exotic/uint32"]->dtype(), DType::kUInt32);
  EXPECT_THAT(ints(t["exotic/uint32"]), ::testing::ElementsAre(0, 4294967295.0));
  EXPECT_EQ(t["exotic/uint64"]->dtype(), DType::kUInt64);
  EXPECT_EQ(t["exotic/uint64"]->as<uint64_t>()[1], UINT64_MAX);
  EXPECT_EQ(t["exotic/uint64"]->shape(), std::vector<int64_t>{2});

  // complex64 holds [1+2j, -3-4j] (complex128 at the same step holds [1+2j, -3.5-4j]).
  const TensorPtr& c64 = t["exotic/complex64"];
  EXPECT_EQ(c64->dtype(), DType::kComplex64);
  EXPECT_EQ(c64->shape(), std::vector<int64_t>{2});
  EXPECT_EQ(c64->ElementAsComplex(0), std::complex<double>(1, 2));
  EXPECT_EQ(c64->ElementAsComplex(1), std::complex<double>(-3, -4));
  EXPECT_EQ(c64->ElementAsDouble(1), -3.0);
  EXPECT_EQ(t["exotic/complex128"]->ElementAsComplex(0), c64->ElementAsComplex(0));

  for (const char* name : {"shapes/empty_f32", "shapes/empty_2d_f32", "shapes/empty_i32"}) {
    const TensorPtr& e = t[name];
    EXPECT_EQ(e->num_elements(), 0) << name;
    EXPECT_TRUE(e->bytes().empty()) << name;
  }
  EXPECT_EQ(t["shapes/empty_f32"]->shape(), std::vector<int64_t>{0});
  EXPECT_EQ(t["shapes/empty_f32"]->dtype(), DType::kFloat32);
  EXPECT_EQ(t["shapes/empty_2d_f32"]->shape(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(t["shapes/empty_i32"]->dtype(), DType::kInt32);

  EXPECT_TRUE(t["shapes/scalar_f32"]->shape().empty());
  EXPECT_EQ(t["shapes/scalar_f32"]->num_elements(), 1);
  EXPECT_EQ(t["shapes/ones_dims"]->shape(), (std::vector<int64_t>{2, 1, 3, 1}));
  EXPECT_EQ(t["large/float32"]->shape(), (std::vector<int64_t>{128, 1024}));
  EXPECT_EQ(t["large/float32"]->bytes().size(), 128u * 1024u * 4u);
  EXPECT_TRUE(t["exotic/string"]->is_string());
  EXPECT_EQ(t["exotic/string"]->shape(), std::vector<int64_t>{3});
}

// Step 5 was written with real payload CRCs (smdebug raises NameError there); litmus reads it.
TEST(DecodeTensorRecordTest, Step5WithPayloadCrcsDecodes) {
  std::map<std::string, TensorPtr> step5 = DecodeStep(5);
  std::map<std::string, TensorPtr> step2 = DecodeStep(2);
  ASSERT_EQ(step5.size(), 26u);
  for (const auto& [name, t] : step5) {
    ASSERT_TRUE(step2.count(name)) << name;
    EXPECT_EQ(t->dtype(), step2[name]->dtype()) << name;
    EXPECT_EQ(t->shape(), step2[name]->shape()) << name;
  }
  // The hook put the step into the data: int32 = [INT32_MIN, -7, step, INT32_MAX].
  EXPECT_EQ(step5["dtypes/int32"]->as<int32_t>()[2], 5);
  EXPECT_EQ(step5["dtypes/int32"]->as<int32_t>()[0], INT32_MIN);
}

TEST(DecodeTensorRecordTest, ReportsTagMismatchWithoutFailing) {
  const FixtureRecord r = ReadIndexedRecords("synthetic_dtypes", 0)[0];
  bool mismatch = false;
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr t,
                              DecodeTensorRecord(BufferOf(r.bytes), r.file, r.offset, "other", &mismatch));
  EXPECT_TRUE(mismatch);
  EXPECT_EQ(t->dtype(), DType::kFloat16);
  LITMUS_ASSERT_OK_AND_ASSIGN(t, DecodeTensorRecord(BufferOf(r.bytes), r.file, r.offset, "other"));
}

TEST(DecodeTensorRecordTest, FramingErrorsPassThrough) {
  FixtureRecord r = ReadIndexedRecords("synthetic_dtypes", 0)[1];
  r.bytes[9] ^= 1;  // length CRC
  StatusOr<TensorPtr> t = Decode(r);
  EXPECT_EQ(t.status().code(), StatusCode::kDataLoss) << t.status().ToString();
  r = ReadIndexedRecords("synthetic_dtypes", 0)[1];
  r.bytes.resize(r.bytes.size() - 1);
  EXPECT_FALSE(Decode(r).ok());
}

// ---------------------------------------------------------------------------------------------
// Records made with the encoder.

std::string Frame(const EncodedEvent& e) {
  std::string payload = e.prefix;
  payload.append(reinterpret_cast<const char*>(e.content.data()), e.content.size());
  payload += e.suffix;
  return tfrecord::FrameRecord(payload, tfrecord::FooterKind::kPayloadCrc);
}

std::string EncodeRecord(std::string_view tag, DType dtype, std::vector<int64_t> shape,
                         std::span<const std::byte> content) {
  TensorEventSpec spec;
  spec.tag = tag;
  spec.step = 3;
  spec.dtype = dtype;
  spec.shape = shape;
  spec.content = content;
  return Frame(EncodeTensorEvent(spec));
}

// Whatever offset the content lands at (the tag length shifts it), the tensor's bytes are
// aligned, correct, inside the record buffer (no second buffer), and in place when they could be.
TEST(DecodeTensorRecordTest, AlignsContentWithAtMostOneMove) {
  const std::vector<std::complex<double>> c128 = {{1, -2}, {3.5, 4}, {-0.0, 1e300}};
  const std::vector<double> f64 = {1.5, -2.25, 1e-300, 7};
  int in_place = 0, moved = 0;
  for (size_t tag_len = 1; tag_len <= 32; ++tag_len) {
    const std::string tag(tag_len, 'x');
    for (DType dtype : {DType::kComplex128, DType::kFloat64}) {
      const std::span<const std::byte> content =
          dtype == DType::kFloat64 ? std::as_bytes(std::span(f64)) : std::as_bytes(std::span(c128));
      const int64_t n = dtype == DType::kFloat64 ? 4 : 3;
      const std::string rec = EncodeRecord(tag, dtype, {n}, content);
      const size_t content_at = rec.find(std::string_view(reinterpret_cast<const char*>(content.data()), content.size()));
      ASSERT_NE(content_at, std::string::npos);
      ByteBuffer buf = BufferOf(rec);
      const std::byte* base = buf.data.get();
      LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr t, DecodeTensorRecord(std::move(buf), "f", 0, tag));
      const std::byte* data = t->bytes().data();
      EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % DTypeSize(dtype), 0u) << tag_len;
      if ((reinterpret_cast<uintptr_t>(base) + content_at) % DTypeSize(dtype) == 0) {
        EXPECT_EQ(data, base + content_at) << "aligned content must stay in place";
        ++in_place;
      } else {
        const std::byte* aligned = base + content_at - (reinterpret_cast<uintptr_t>(base) + content_at) % DTypeSize(dtype);
        EXPECT_EQ(data, aligned) << "misaligned content moves down to the nearest aligned address";
        ++moved;
      }
      ASSERT_EQ(t->bytes().size(), content.size());
      EXPECT_EQ(std::memcmp(data, content.data(), content.size()), 0) << tag_len;
      if (dtype == DType::kComplex128) {
        EXPECT_EQ(t->as<std::complex<double>>()[1], c128[1]);
      } else {
        EXPECT_EQ(t->as<double>()[2], 1e-300);
      }
    }
  }
  EXPECT_GT(in_place, 0);
  EXPECT_GT(moved, 0);
}

// Records read together share one buffer: each slice decodes on its own, misaligned data moves
// only inside its own record, and the tensors keep the shared buffer alive.
TEST(DecodeTensorRecordTest, SlicesOfOneSharedBuffer) {
  const std::vector<double> a = {1.5, -2.25, 1e-300, 7};
  const std::vector<float> b = {3, 4, 5};
  std::string all = "?";  // one byte first, so that alignments differ from a fresh buffer's
  std::vector<std::pair<size_t, size_t>> slices;
  for (int i = 0; i < 6; ++i) {
    const std::string rec = i % 2 == 0 ? EncodeRecord("a" + std::string(i, 'x'), DType::kFloat64, {4}, std::as_bytes(std::span(a)))
                                       : EncodeRecord("b", DType::kFloat32, {3}, std::as_bytes(std::span(b)));
    slices.emplace_back(all.size(), rec.size());
    all += rec;
    all += std::string(i, '#');  // gaps between records
  }
  const std::string original = all;
  std::shared_ptr<std::byte[]> buffer(new std::byte[all.size()]);
  std::memcpy(buffer.get(), all.data(), all.size());
  std::vector<TensorPtr> tensors;
  for (const auto& [at, size] : slices) {
    const std::span<std::byte> record(buffer.get() + at, size);
    LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr t, DecodeTensorRecord(buffer, record, "f", at, "t"));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->bytes().data()) % DTypeSize(t->dtype()), 0u);
    EXPECT_GE(t->bytes().data(), record.data());
    EXPECT_LE(t->bytes().data() + t->bytes().size(), record.data() + record.size());
    tensors.push_back(std::move(t));
  }
  // Bytes between the records are untouched.
  for (size_t i = 0; i < slices.size(); ++i) {
    const size_t gap_begin = slices[i].first + slices[i].second;
    const size_t gap_end = i + 1 < slices.size() ? slices[i + 1].first : all.size();
    EXPECT_EQ(std::memcmp(buffer.get() + gap_begin, original.data() + gap_begin, gap_end - gap_begin), 0) << i;
  }
  buffer.reset();  // the tensors own it now
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (i % 2 == 0) {
      EXPECT_EQ(tensors[i]->as<double>()[2], 1e-300);
      EXPECT_EQ(tensors[i]->as<double>()[3], 7.0);
    } else {
      EXPECT_EQ(tensors[i]->as<float>()[2], 5.0f);
    }
  }
}

TEST(DecodeTensorRecordTest, ContentSizeMismatchIsDataLoss) {
  const std::vector<float> two = {1, 2};
  const std::string rec = EncodeRecord("t", DType::kFloat32, {3}, std::as_bytes(std::span(two)));
  StatusOr<TensorPtr> t = DecodeTensorRecord(BufferOf(rec), "events/x.tfevents", 1234, "t");
  EXPECT_EQ(t.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(t.status().message(), HasSubstr("events/x.tfevents"));
  EXPECT_THAT(t.status().message(), HasSubstr("1234"));
  EXPECT_THAT(t.status().message(), HasSubstr("'t'"));
  // Content given for a zero-element shape is a mismatch too.
  const std::string rec0 = EncodeRecord("t", DType::kFloat32, {0, 2}, std::as_bytes(std::span(two)));
  EXPECT_EQ(DecodeTensorRecord(BufferOf(rec0), "f", 0, "t").status().code(), StatusCode::kDataLoss);
}

std::string FramedEvent(const pb::Event& event) {
  return tfrecord::FrameRecord(event.SerializeAsString(), tfrecord::FooterKind::kPlaceholder);
}

pb::TensorProto* AddTensor(pb::Event* event, std::string_view tag = "t") {
  pb::Summary::Value* v = event->mutable_summary()->add_value();
  v->set_tag(std::string(tag));
  return v->mutable_tensor();
}

void SetShape(pb::TensorProto* t, std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) t->mutable_tensor_shape()->add_dim()->set_size(d);
}

StatusOr<TensorPtr> DecodeEventProto(const pb::Event& event, std::string_view tag = "t") {
  return DecodeTensorRecord(BufferOf(FramedEvent(event)), "f.tfevents", 0, tag);
}

TEST(DecodeTensorRecordTest, NegativeDimIsDataLoss) {
  pb::Event e;
  pb::TensorProto* t = AddTensor(&e);
  t->set_dtype(pb::DT_FLOAT);
  SetShape(t, {2, -1});
  EXPECT_EQ(DecodeEventProto(e).status().code(), StatusCode::kDataLoss);
}

TEST(DecodeTensorRecordTest, ElementCountOverflowIsDataLoss) {
  pb::Event e;
  pb::TensorProto* t = AddTensor(&e);
  t->set_dtype(pb::DT_DOUBLE);
  SetShape(t, {int64_t{1} << 40, int64_t{1} << 40});
  t->set_tensor_content(std::string(8, '\0'));
  EXPECT_EQ(DecodeEventProto(e).status().code(), StatusCode::kDataLoss);
  // The element count fits but its byte size does not.
  pb::Event e2;
  pb::TensorProto* t2 = AddTensor(&e2);
  t2->set_dtype(pb::DT_DOUBLE);
  SetShape(t2, {int64_t{1} << 61});
  t2->set_tensor_content(std::string(8, '\0'));
  EXPECT_EQ(DecodeEventProto(e2).status().code(), StatusCode::kDataLoss);
}

TEST(DecodeTensorRecordTest, RecordWithoutTensorIsDataLoss) {
  pb::Event e;
  pb::Summary::Value* v = e.mutable_summary()->add_value();
  v->set_tag("tb_only/scalar");
  v->set_simple_value(1.5f);
  StatusOr<TensorPtr> t = DecodeEventProto(e, "tb_only/scalar");
  EXPECT_EQ(t.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(t.status().message(), HasSubstr("record holds no tensor"));
  // The fixture's unindexed simple_value record (Appendix A: offset 527922, 50 bytes).
  const std::string events = testing::ReadWholeFile(
      testing::FixturePath("synthetic_dtypes") / "events/000000000000/000000000000_worker_0.tfevents");
  ASSERT_GE(events.size(), 527922u + 50u);
  t = DecodeTensorRecord(BufferOf(events.substr(527922, 50)), "f", 527922, "tb_only/scalar");
  EXPECT_EQ(t.status().code(), StatusCode::kDataLoss);
}

TEST(DecodeTensorRecordTest, UnknownDtypeIsUnimplemented) {
  pb::Event e;
  pb::TensorProto* t = AddTensor(&e, "weights/bf16");
  t->set_dtype(pb::DT_BFLOAT16);
  SetShape(t, {2});
  t->set_tensor_content(std::string(4, '\0'));
  StatusOr<TensorPtr> r = DecodeEventProto(e, "weights/bf16");
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(r.status().message(), HasSubstr("14"));
  EXPECT_THAT(r.status().message(), HasSubstr("weights/bf16"));
}

TEST(DecodeTensorRecordTest, StringsMustBeOneDimensional) {
  pb::Event ok;
  pb::TensorProto* t = AddTensor(&ok);
  SetShape(t, {2});
  t->add_string_val("a");
  t->add_string_val(std::string("b\0c", 3));
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr s, DecodeEventProto(ok));
  EXPECT_TRUE(s->is_string());
  EXPECT_EQ(s->strings(), (std::vector<std::string>{"a", std::string("b\0c", 3)}));
  EXPECT_EQ(s->num_elements(), 2);
  EXPECT_GE(s->memory_bytes(), 2 * sizeof(std::string));

  pb::Event scalar;
  t = AddTensor(&scalar);
  t->add_string_val("a");
  EXPECT_EQ(DecodeEventProto(scalar).status().code(), StatusCode::kDataLoss);

  pb::Event wrong_count;
  t = AddTensor(&wrong_count);
  SetShape(t, {3});
  t->add_string_val("a");
  EXPECT_EQ(DecodeEventProto(wrong_count).status().code(), StatusCode::kDataLoss);

  pb::Event empty;
  t = AddTensor(&empty);
  t->set_dtype(pb::DT_STRING);
  SetShape(t, {0});
  LITMUS_ASSERT_OK_AND_ASSIGN(s, DecodeEventProto(empty));
  EXPECT_TRUE(s->is_string());
  EXPECT_EQ(s->num_elements(), 0);
}

// ---------------------------------------------------------------------------------------------
// TF *_val fallbacks (content absent, elements > 0).

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.ElementAsDouble(i));
  return v;
}

TEST(ValFallbackTest, FloatValRepeatsLastValue) {
  pb::Event e;
  pb::TensorProto* t = AddTensor(&e);
  t->set_dtype(pb::DT_FLOAT);
  SetShape(t, {3});
  t->add_float_val(1);
  t->add_float_val(2);
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr r, DecodeEventProto(e));
  EXPECT_EQ(r->dtype(), DType::kFloat32);
  EXPECT_THAT(Values(*r), ::testing::ElementsAre(1, 2, 2));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(r->bytes().data()) % 4, 0u);
}

TEST(ValFallbackTest, ExtraValuesAreIgnoredAsInTensorFlow) {
  pb::Event e;
  pb::TensorProto* t = AddTensor(&e);
  t->set_dtype(pb::DT_DOUBLE);
  SetShape(t, {2});
  for (double d : {1.5, 2.5, 3.5}) t->add_double_val(d);
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr r, DecodeEventProto(e));
  EXPECT_THAT(Values(*r), ::testing::ElementsAre(1.5, 2.5));
}

TEST(ValFallbackTest, DoubleValFillsMultiDimensionalShape) {
  pb::Event e;
  pb::TensorProto* t = AddTensor(&e);
  t->set_dtype(pb::DT_DOUBLE);
  SetShape(t, {2, 2});
  t->add_double_val(-1.25);
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr r, DecodeEventProto(e));
  EXPECT_THAT(Values(*r), ::testing::ElementsAre(-1.25, -1.25, -1.25, -1.25));
}

TEST(ValFallbackTest, IntValForNarrowIntegerTypes) {
  struct Case {
    pb::DataType dtype;
    std::vector<int32_t> vals;
    std::vector<double> want;
  };
  const std::vector<Case> cases = {
      {pb::DT_INT32, {INT32_MIN, 7}, {INT32_MIN, 7, 7}},
      {pb::DT_INT16, {-300, 300}, {-300, 300, 300}},
      {pb::DT_INT8, {-1, 127}, {-1, 127, 127}},
      {pb::DT_UINT8, {255, 0}, {255, 0, 0}},
      {pb::DT_UINT16, {65535}, {65535, 65535, 65535}},
  };
  for (const Case& c : cases) {
    pb::Event e;
    pb::TensorProto* t = AddTensor(&e);
    t->set_dtype(c.dtype);
    SetShape(t, {3});
    for (int32_t v : c.vals) t->add_int_val(v);
    LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr r, DecodeEventProto(e));
    EXPECT_EQ(static_cast<int>(r->dtype()), static_cast<int>(c.dtype));
    EXPECT_EQ(Values(*r), c.want) << pb::DataType_Name(c.dtype);
  }
}

TEST(ValFallbackTest, Int64BoolAndHalfVals) {
  pb::Event e64;
  pb::TensorProto* t = AddTensor(&e64);
  t->set_dtype(pb::DT_INT64);
  SetShape(t, {3});
  t->add_int64_val(INT64_MIN);
  t->add_int64_val(9007199254740993);
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr r, DecodeEventProto(e64));
  EXPECT_THAT(std::vector<int64_t>(r->as<int64_t>().begin(), r->as<int64_t>().end()),
              ::testing::ElementsAre(INT64_MIN, 9007199254740993, 9007199254740993));

  pb::Event eb;
  t = AddTensor(&eb);
  t->set_dtype(pb::DT_BOOL);
  SetShape(t, {3});
  t->add_bool_val(false);
  t->add_bool_val(true);
  LITMUS_ASSERT_OK_AND_ASSIGN(r, DecodeEventProto(eb));
  EXPECT_THAT(Values(*r), ::testing::ElementsAre(0, 1, 1));

  pb::Event eh;
  t = AddTensor(&eh);
  t->set_dtype(pb::DT_HALF);
  SetShape(t, {2, 2});
  t->add_half_val(0x3c00);  // 1.0
  t->add_half_val(0xc000);  // -2.0
  t->add_half_val(0x7bff);  // 65504
  LITMUS_ASSERT_OK_AND_ASSIGN(r, DecodeEventProto(eh));
  EXPECT_EQ(r->dtype(), DType::kFloat16);
  EXPECT_THAT(Values(*r), ::testing::ElementsAre(1, -2, 65504, 65504));
}

TEST(ValFallbackTest, ComplexValsRepeatLastPair) {
  pb::Event e;
  pb::TensorProto* t = AddTensor(&e);
  t->set_dtype(pb::DT_COMPLEX64);
  SetShape(t, {3});
  for (float f : {1.f, 2.f, 3.f, 4.f}) t->add_scomplex_val(f);
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr r, DecodeEventProto(e));
  EXPECT_EQ(r->ElementAsComplex(0), std::complex<double>(1, 2));
  EXPECT_EQ(r->ElementAsComplex(1), std::complex<double>(3, 4));
  EXPECT_EQ(r->ElementAsComplex(2), std::complex<double>(3, 4));

  pb::Event e2;
  t = AddTensor(&e2);
  t->set_dtype(pb::DT_COMPLEX128);
  SetShape(t, {2});
  for (double d : {1.0, -2.0, 5.0}) t->add_dcomplex_val(d);  // trailing lone real part ignored
  LITMUS_ASSERT_OK_AND_ASSIGN(r, DecodeEventProto(e2));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(r->bytes().data()) % 16, 0u);
  EXPECT_EQ(r->ElementAsComplex(0), std::complex<double>(1, -2));
  EXPECT_EQ(r->ElementAsComplex(1), std::complex<double>(1, -2));
}

TEST(ValFallbackTest, ContentWinsOverVals) {
  pb::Event e;
  pb::TensorProto* t = AddTensor(&e);
  t->set_dtype(pb::DT_FLOAT);
  SetShape(t, {1});
  const float f = 9.5f;
  t->set_tensor_content(std::string(reinterpret_cast<const char*>(&f), 4));
  t->add_float_val(1);
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr r, DecodeEventProto(e));
  EXPECT_THAT(Values(*r), ::testing::ElementsAre(9.5));
}

TEST(ValFallbackTest, NoDataIsDataLoss) {
  for (pb::DataType dtype : {pb::DT_FLOAT, pb::DT_INT32, pb::DT_UINT32, pb::DT_UINT64, pb::DT_HALF}) {
    pb::Event e;
    pb::TensorProto* t = AddTensor(&e);
    t->set_dtype(dtype);
    SetShape(t, {2});
    StatusOr<TensorPtr> r = DecodeEventProto(e);
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << pb::DataType_Name(dtype);
    EXPECT_THAT(r.status().message(), HasSubstr("no tensor data"));
  }
  // A value in a field of another dtype does not count (float_val for an int32 tensor).
  pb::Event e;
  pb::TensorProto* t = AddTensor(&e);
  t->set_dtype(pb::DT_INT32);
  t->add_float_val(1);
  EXPECT_EQ(DecodeEventProto(e).status().code(), StatusCode::kDataLoss);
  // Only a lone real part for a complex element: no whole element.
  pb::Event c;
  t = AddTensor(&c);
  t->set_dtype(pb::DT_COMPLEX128);
  t->add_dcomplex_val(1);
  EXPECT_EQ(DecodeEventProto(c).status().code(), StatusCode::kDataLoss);
}

TEST(ValFallbackTest, HugeExpansionIsRefused) {
  pb::Event e;
  pb::TensorProto* t = AddTensor(&e);
  t->set_dtype(pb::DT_FLOAT);
  SetShape(t, {int64_t{1} << 40});
  t->add_float_val(1);
  EXPECT_EQ(DecodeEventProto(e).status().code(), StatusCode::kResourceExhausted);
}

TEST(TensorTest, ElementAccessForEveryDtype) {
  auto make = [](DType dtype, std::vector<int64_t> shape, auto values) {
    auto owner = std::make_shared<decltype(values)>(std::move(values));
    return Tensor(dtype, std::move(shape), std::as_bytes(std::span(*owner)), owner);
  };
  EXPECT_EQ(make(DType::kFloat32, {2}, std::vector<float>{1.5f, -2}).ElementAsDouble(1), -2);
  EXPECT_EQ(make(DType::kFloat64, {}, std::vector<double>{0.1}).ElementAsDouble(0), 0.1);
  EXPECT_EQ(make(DType::kInt8, {1}, std::vector<int8_t>{-128}).ElementAsDouble(0), -128);
  EXPECT_EQ(make(DType::kUInt8, {1}, std::vector<uint8_t>{200}).ElementAsDouble(0), 200);
  EXPECT_EQ(make(DType::kInt16, {1}, std::vector<int16_t>{-32768}).ElementAsDouble(0), -32768);
  EXPECT_EQ(make(DType::kUInt16, {1}, std::vector<uint16_t>{65535}).ElementAsDouble(0), 65535);
  EXPECT_EQ(make(DType::kInt32, {1}, std::vector<int32_t>{INT32_MIN}).ElementAsDouble(0), INT32_MIN);
  EXPECT_EQ(make(DType::kUInt32, {1}, std::vector<uint32_t>{UINT32_MAX}).ElementAsDouble(0), UINT32_MAX);
  EXPECT_EQ(make(DType::kInt64, {1}, std::vector<int64_t>{-5}).ElementAsDouble(0), -5);
  EXPECT_EQ(make(DType::kUInt64, {1}, std::vector<uint64_t>{UINT64_MAX}).ElementAsDouble(0), 0x1p64);
  EXPECT_EQ(make(DType::kBool, {2}, std::vector<uint8_t>{0, 1}).ElementAsDouble(1), 1);
  EXPECT_EQ(make(DType::kFloat16, {1}, std::vector<uint16_t>{0xbc00}).ElementAsDouble(0), -1);
  const Tensor c64 = make(DType::kComplex64, {1}, std::vector<float>{1.5f, -2});
  EXPECT_EQ(c64.ElementAsDouble(0), 1.5);
  EXPECT_EQ(c64.ElementAsComplex(0), std::complex<double>(1.5, -2));
  const Tensor c128 = make(DType::kComplex128, {2}, std::vector<double>{1, 2, 3, 4});
  EXPECT_EQ(c128.ElementAsComplex(1), std::complex<double>(3, 4));
  EXPECT_EQ(c128.num_elements(), 2);
  const Tensor big = make(DType::kFloat32, {4, 256}, std::vector<float>(1024));
  EXPECT_EQ(big.num_elements(), 1024);
  EXPECT_GE(big.memory_bytes(), 4096u);
  EXPECT_LT(big.memory_bytes(), 4096u + 1024u);
}

}  // namespace
}  // namespace litmus
