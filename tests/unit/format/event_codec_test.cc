// Tests for the hand-written Event codec: the spec's worked example, encoder output against the
// generated protobuf classes, *_val handling, protobuf merge rules, and malformed input.
#include "litmus/format/event_codec.h"

#include <google/protobuf/stubs/logging.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "event_compare.h"
#include "litmus/format/proto/event.pb.h"

namespace litmus {
namespace {

namespace pb = litmus::format::proto;
using testing::MatchesGenerated;

std::span<const std::byte> Bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

std::string Payload(const EncodedEvent& e) {
  return e.prefix + std::string(reinterpret_cast<const char*>(e.content.data()), e.content.size()) +
         e.suffix;
}

std::string Hex(const std::string& s) {
  std::string out;
  char buf[4];
  for (unsigned char c : s) {
    std::snprintf(buf, sizeof buf, "%02x ", c);
    out += buf;
  }
  return out;
}

// Payload of the spec §2.6 worked example (MSELoss_output_0, pt_exploding step 0).
std::string WorkedExample() {
  const unsigned char bytes[] = {
      0x09, 0xe8, 0x62, 0xb8, 0x6a, 0x94, 0xc0, 0xda, 0x41, 0x2a, 0x3d, 0x0a, 0x3b, 0x0a, 0x10,
      'M',  'S',  'E',  'L',  'o',  's',  's',  '_',  'o',  'u',  't',  'p',  'u',  't',  '_',
      '0',  0x42, 0x0a, 0x08, 0x01, 0x12, 0x00, 0x22, 0x04, 0x5d, 0x60, 0x1e, 0x40, 0x4a, 0x1b,
      0x0a, 0x0e, 0x0a, 0x09, 'm',  'o',  'd',  'e',  '_',  's',  't',  'e',  'p',  0x12, 0x01,
      '0',  0x0a, 0x09, 0x0a, 0x04, 'm',  'o',  'd',  'e',  0x12, 0x01, '1'};
  return std::string(reinterpret_cast<const char*>(bytes), sizeof bytes);
}

TEST(EventCodecTest, DecodesWorkedExample) {
  const std::string payload = WorkedExample();
  ASSERT_EQ(payload.size(), 72u);
  auto v = DecodeEvent(Bytes(payload));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->wall_time, 1795314090.8810368);
  EXPECT_EQ(v->step, 0);
  EXPECT_EQ(v->tag, "MSELoss_output_0");
  EXPECT_EQ(v->mode, Mode::kTrain);
  EXPECT_EQ(v->mode_step, 0);
  EXPECT_TRUE(v->has_tensor);
  EXPECT_EQ(v->raw_dtype, 1);
  EXPECT_TRUE(v->shape.empty());
  ASSERT_EQ(v->content.size(), 4u);
  float f;
  std::memcpy(&f, v->content.data(), 4);
  EXPECT_EQ(f, 2.4746315479278564f);
  EXPECT_EQ(v->packed_field, 0);
  EXPECT_FALSE(v->simple_value);
  EXPECT_TRUE(MatchesGenerated(Bytes(payload), *v));
}

TEST(EventCodecTest, EncodesWorkedExample) {
  const float value = 2.4746315479278564f;
  TensorEventSpec spec;
  spec.wall_time = 1795314090.8810368;
  spec.step = 0;
  spec.tag = "MSELoss_output_0";
  spec.mode = Mode::kTrain;
  spec.mode_step = 0;
  spec.dtype = DType::kFloat32;
  spec.content = std::as_bytes(std::span(&value, 1));
  const EncodedEvent e = EncodeTensorEvent(spec);
  EXPECT_EQ(e.payload_size(), 72u);
  EXPECT_EQ(e.content.data(), spec.content.data());  // not copied
  EXPECT_EQ(Hex(Payload(e)), Hex(WorkedExample()));
}

// Builds the same Event with the generated classes, as smdebug's writer does.
std::string GeneratedPayload(const TensorEventSpec& spec) {
  pb::Event event;
  event.set_wall_time(spec.wall_time);
  event.set_step(spec.step);
  auto* value = event.mutable_summary()->add_value();
  value->set_tag(std::string(spec.tag));
  auto* tensor = value->mutable_tensor();
  tensor->set_dtype(static_cast<pb::DataType>(spec.dtype));
  auto* shape = tensor->mutable_tensor_shape();
  for (int64_t d : spec.shape) {
    auto* dim = shape->add_dim();
    dim->set_size(d);
    dim->set_name(std::string(spec.tag) + "_" + std::to_string(d));
  }
  tensor->set_tensor_content(
      std::string(reinterpret_cast<const char*>(spec.content.data()), spec.content.size()));
  for (std::string_view s : spec.strings) tensor->add_string_val(std::string(s));
  auto* pd = value->mutable_metadata()->add_plugin_data();
  pd->set_plugin_name("mode_step");
  pd->set_content(std::to_string(spec.mode_step));
  pd = value->mutable_metadata()->add_plugin_data();
  pd->set_plugin_name("mode");
  pd->set_content(std::to_string(static_cast<int>(spec.mode)));
  return event.SerializeAsString();
}

TEST(EventCodecTest, EncoderMatchesGeneratedSerializer) {
  std::mt19937_64 rng(1234);
  const DType numeric[] = {DType::kFloat32,    DType::kFloat64, DType::kInt32, DType::kUInt8,
                           DType::kInt8,       DType::kInt64,   DType::kBool,  DType::kFloat16,
                           DType::kComplex128, DType::kUInt64};
  const double wall_times[] = {0.0, -0.0, 1.5, 1795314090.8810368, std::nan("")};
  const int64_t steps[] = {0, 1, 127, 128, 999'999'999'999, -1};
  for (int i = 0; i < 400; ++i) {
    TensorEventSpec spec;
    spec.wall_time = wall_times[i % std::size(wall_times)];
    spec.step = steps[(i / 5) % std::size(steps)];
    const std::string tag =
        i % 17 == 0 ? std::string()
                    : "layer" + std::to_string(i) + (i % 3 ? "/w:0" : std::string(200, 'x'));
    spec.tag = tag;
    spec.mode = kAllModes[i % 4];
    spec.mode_step = i % 7 == 0 ? -5 : static_cast<int64_t>(rng() % 100000);
    std::vector<int64_t> shape;
    const int rank = static_cast<int>(rng() % 4);
    // Small dims (zero-size tensors included); one long 1-D case exercises multi-byte lengths.
    for (int r = 0; r < rank; ++r)
      shape.push_back(static_cast<int64_t>(rng() % (i % 5 == 0 ? 3 : 20)));
    if (i % 50 == 1) shape = {5000};
    spec.shape = shape;
    std::vector<std::string> string_storage;
    std::vector<std::string_view> strings;
    std::string content;
    if (i % 6 == 0) {
      spec.dtype = DType::kInvalid;  // strings, as smdebug writes them
      const int n = static_cast<int>(rng() % 5);
      for (int k = 0; k < n; ++k) {
        std::string s(k % 2 ? 150 : 1, k % 2 ? 'q' : 's');
        s.append(std::to_string(k));
        string_storage.push_back(std::move(s));
      }
      for (const auto& s : string_storage) strings.push_back(s);
      spec.strings = strings;
    } else {
      spec.dtype = numeric[i % std::size(numeric)];
      size_t elements = 1;
      for (int64_t d : shape) elements *= static_cast<size_t>(d);
      content.resize(elements * DTypeSize(spec.dtype));
      for (char& c : content) c = static_cast<char>(rng());
      spec.content = std::as_bytes(std::span(content.data(), content.size()));
    }
    const std::string ours = Payload(EncodeTensorEvent(spec));
    ASSERT_EQ(Hex(ours), Hex(GeneratedPayload(spec))) << "case " << i;
    // And it decodes back to the spec.
    auto v = DecodeEvent(Bytes(ours));
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(v->tag, spec.tag);
    EXPECT_EQ(v->step, spec.step);
    EXPECT_EQ(v->mode, spec.mode);
    EXPECT_EQ(v->mode_step, spec.mode_step);
    EXPECT_EQ(v->shape, shape);
    EXPECT_EQ(v->string_val, strings);
    EXPECT_TRUE(std::ranges::equal(v->content, spec.content));
    EXPECT_TRUE(MatchesGenerated(Bytes(ours), *v));
  }
}

TEST(EventCodecTest, RepeatedPluginDataLastEntryWins) {
  pb::Event event;
  auto* value = event.mutable_summary()->add_value();
  value->set_tag("t");
  for (auto [name, content] :
       {std::pair{"mode_step", "3"}, {"other", "x"}, {"mode", "2"}, {"mode_step", " 12 "}}) {
    auto* pd = value->mutable_metadata()->add_plugin_data();
    pd->set_plugin_name(name);
    pd->set_content(content);
  }
  const std::string payload = event.SerializeAsString();
  auto v = DecodeEvent(Bytes(payload));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->mode, Mode::kEval);
  EXPECT_EQ(v->mode_step, 12);
  EXPECT_FALSE(v->has_tensor);
  EXPECT_TRUE(MatchesGenerated(Bytes(payload), *v));
}

TEST(EventCodecTest, BadPluginDataIsDataLoss) {
  for (auto [name, content] :
       {std::pair{"mode", "7"}, {"mode", "TRAIN"}, {"mode_step", "1.5"}, {"mode_step", ""}}) {
    pb::Event event;
    auto* pd = event.mutable_summary()->add_value()->mutable_metadata()->add_plugin_data();
    pd->set_plugin_name(name);
    pd->set_content(content);
    const std::string payload = event.SerializeAsString();
    EXPECT_EQ(DecodeEvent(Bytes(payload)).status().code(), StatusCode::kDataLoss)
        << name << "=" << content;
  }
}

TEST(EventCodecTest, SimpleValueRecord) {
  pb::Event event;
  event.set_wall_time(5.0);
  auto* value = event.mutable_summary()->add_value();
  value->set_tag("tb_only/scalar");
  value->set_simple_value(1.5f);
  const std::string payload = event.SerializeAsString();
  auto v = DecodeEvent(Bytes(payload));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->simple_value, 1.5f);
  EXPECT_FALSE(v->has_tensor);
  EXPECT_EQ(v->tag, "tb_only/scalar");
  EXPECT_TRUE(MatchesGenerated(Bytes(payload), *v));
}

TEST(EventCodecTest, PackedValFieldsForEachDtype) {
  struct Case {
    pb::DataType dtype;
    int field;
  };
  for (Case c : {Case{pb::DT_FLOAT, 5},
                 {pb::DT_DOUBLE, 6},
                 {pb::DT_INT32, 7},
                 {pb::DT_INT8, 7},
                 {pb::DT_UINT16, 7},
                 {pb::DT_COMPLEX64, 9},
                 {pb::DT_INT64, 10},
                 {pb::DT_BOOL, 11},
                 {pb::DT_COMPLEX128, 12},
                 {pb::DT_HALF, 13}}) {
    pb::Event event;
    auto* t = event.mutable_summary()->add_value()->mutable_tensor();
    t->set_dtype(c.dtype);
    t->mutable_tensor_shape()->add_dim()->set_size(3);
    // Fill every *_val field; only the one matching the dtype is reported.
    for (int k = 0; k < 3; ++k) {
      t->add_float_val(1.5f * k);
      t->add_double_val(-2.5 * k);
      t->add_int_val(-7 * k);
      t->add_scomplex_val(0.25f * k);
      t->add_int64_val(int64_t{-1} << (20 * k));
      t->add_bool_val(k == 1);
      t->add_dcomplex_val(1e300 * k);
      t->add_half_val(0x3C00 + k);
    }
    const std::string payload = event.SerializeAsString();
    auto v = DecodeEvent(Bytes(payload));
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(v->packed_field, c.field) << c.dtype;
    EXPECT_FALSE(v->packed_vals.empty());
    EXPECT_TRUE(MatchesGenerated(Bytes(payload), *v)) << c.dtype;
  }
}

// Hand-assembled wire bytes for cases the generated serializer never produces.
std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string Key(uint32_t field, uint32_t wire_type) {
  return Varint((uint64_t{field} << 3) | wire_type);
}
std::string Len(uint32_t field, const std::string& body) {
  return Key(field, 2) + Varint(body.size()) + body;
}
std::string EventWithTensor(const std::string& tensor_body) {
  return Len(5, Len(1, Len(1, "t") + Len(8, tensor_body)));
}

TEST(EventCodecTest, UnpackedValFieldsAreUnimplemented) {
  // dtype FLOAT with float_val written unpacked (wire type 5): not supported, reported clearly.
  std::string tensor = Key(1, 0) + Varint(1) + Key(5, 5) + std::string("\x00\x00\xc0\x3f", 4);
  auto v = DecodeEvent(Bytes(EventWithTensor(tensor)));
  EXPECT_EQ(v.status().code(), StatusCode::kUnimplemented) << v.status().ToString();
  // Two separate packed runs of the matching field cannot be one span either.
  tensor = Key(1, 0) + Varint(1) + Len(5, std::string(4, '\0')) + Len(5, std::string(4, '\0'));
  EXPECT_EQ(DecodeEvent(Bytes(EventWithTensor(tensor))).status().code(),
            StatusCode::kUnimplemented);
  // Unpacked values of a field that does not match the dtype are harmless.
  tensor =
      Key(1, 0) + Varint(9) + Key(5, 5) + std::string(4, '\0') + Len(10, Varint(5) + Varint(300));
  const std::string payload = EventWithTensor(tensor);  // the views below borrow from it
  v = DecodeEvent(Bytes(payload));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->packed_field, 10);
  EXPECT_EQ(testing::PackedVarints(v->packed_vals), (std::vector<uint64_t>{5, 300}));
}

TEST(EventCodecTest, MalformedPackedValsAreDataLoss) {
  std::string tensor = Key(1, 0) + Varint(1) + Len(5, std::string(6, '\0'));  // 1.5 floats
  EXPECT_EQ(DecodeEvent(Bytes(EventWithTensor(tensor))).status().code(), StatusCode::kDataLoss);
  tensor = Key(1, 0) + Varint(9) + Len(10, "\x01\x80");  // truncated varint inside the run
  EXPECT_EQ(DecodeEvent(Bytes(EventWithTensor(tensor))).status().code(), StatusCode::kDataLoss);
}

TEST(EventCodecTest, UnknownFieldsAreSkippedAtEveryLevel) {
  const std::string unknown = Key(99, 0) + Varint(12345) + Key(98, 1) + std::string(8, 'a') +
                              Len(97, "zz") + Key(96, 5) + std::string(4, 'b');
  const std::string dim = Len(2, unknown + Key(1, 0) + Varint(4) + Len(2, "t_4"));
  const std::string shape = Len(2, unknown + dim + Key(3, 0) + Varint(0));
  const std::string tensor = unknown + Key(1, 0) + Varint(3) + shape + Key(3, 0) + Varint(7) +
                             Len(4, std::string(16, '\x01'));
  const std::string pd = Len(1, unknown + Len(1, "mode") + Len(2, "3"));
  const std::string value = unknown + Len(1, "t") + Key(7, 2) + Varint(4) + "node" +
                            Len(8, tensor) + Len(9, unknown + pd);
  const std::string payload =
      unknown + Key(2, 0) + Varint(77) + Len(5, unknown + Len(1, value)) + Key(6, 2) + Varint(0);
  auto v = DecodeEvent(Bytes(payload));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->step, 77);
  EXPECT_EQ(v->shape, std::vector<int64_t>{4});
  EXPECT_EQ(v->raw_dtype, 3);
  EXPECT_EQ(v->content.size(), 16u);
  EXPECT_EQ(v->mode, Mode::kPredict);
  EXPECT_FALSE(v->mode_step);
  EXPECT_TRUE(MatchesGenerated(Bytes(payload), *v));
}

TEST(EventCodecTest, FollowsProtobufMergeRules) {
  // Two Summary occurrences: values concatenate, so the first Value is from the first one.
  // A second tensor occurrence merges: dims append, content (a scalar) is replaced.
  const std::string t1 =
      Key(1, 0) + Varint(1) + Len(2, Len(2, Key(1, 0) + Varint(2))) + Len(4, "AAAAAAAA");
  const std::string t2 = Len(2, Len(2, Key(1, 0) + Varint(3))) + Len(4, "BBBBBBBBBBBBBBBBBBBBBBBB");
  const std::string first = Len(1, Len(1, "first") + Len(8, t1) + Len(8, t2));
  const std::string second = Len(1, Len(1, "second"));
  const std::string payload =
      Len(5, first) + Len(5, second) + Key(2, 0) + Varint(4) + Key(2, 0) + Varint(9);
  auto v = DecodeEvent(Bytes(payload));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->tag, "first");
  EXPECT_EQ(v->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(v->content.size(), 24u);
  EXPECT_EQ(v->step, 9);
  EXPECT_TRUE(MatchesGenerated(Bytes(payload), *v));

  // oneof: a simple_value after the tensor replaces it; a tensor after that starts fresh.
  const std::string replaced = Len(5, Len(1, Len(8, t1) + Key(2, 5) + std::string(4, '\0')));
  v = DecodeEvent(Bytes(replaced));
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->has_tensor);
  EXPECT_TRUE(v->simple_value);
  EXPECT_TRUE(MatchesGenerated(Bytes(replaced), *v));
  const std::string fresh =
      Len(5, Len(1, Len(8, t1) + Key(2, 5) + std::string(4, '\0') + Len(8, t2)));
  v = DecodeEvent(Bytes(fresh));
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->has_tensor);
  EXPECT_EQ(v->raw_dtype, 0);
  EXPECT_EQ(v->shape, std::vector<int64_t>{3});
  EXPECT_TRUE(MatchesGenerated(Bytes(fresh), *v));
  // Event.what oneof: file_version after the summary clears it.
  const std::string cleared = Len(5, first) + Len(3, "brain.Event:2");
  v = DecodeEvent(Bytes(cleared));
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->tag.empty());
  EXPECT_TRUE(MatchesGenerated(Bytes(cleared), *v));
}

TEST(EventCodecTest, MalformedInputIsDataLoss) {
  const std::string good = WorkedExample();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"truncated varint", Key(2, 0) + "\x80\x80"},
      {"11-byte varint", Key(2, 0) + std::string(10, '\x80') + "\x01"},
      {"length past end", Key(5, 2) + Varint(10) + "abc"},
      {"huge length", Key(5, 2) + Varint(~uint64_t{0}) + "abc"},
      {"truncated fixed64", Key(1, 1) + "abc"},
      {"truncated fixed32 (unknown field)", Key(50, 5) + "ab"},
      {"wrong wire type for wall_time", Key(1, 0) + Varint(5)},
      {"wrong wire type for summary", Key(5, 0) + Varint(5)},
      {"wrong wire type for tag", Len(5, Len(1, Key(1, 0) + Varint(1)))},
      {"wrong wire type for dtype", EventWithTensor(Key(1, 2) + Varint(0))},
      {"wrong wire type for float_val", EventWithTensor(Key(5, 1) + std::string(8, '\0'))},
      {"start group", Key(50, 3) + Key(50, 4)},
      {"end group", Key(50, 4)},
      {"wire type 6", Key(50, 6)},
      {"field number 0", Key(0, 0) + Varint(1)},
      {"nested length past end", Len(5, Key(1, 2) + Varint(50) + "abc")},
  };
  for (const auto& [name, payload] : cases) {
    auto v = DecodeEvent(Bytes(payload));
    EXPECT_EQ(v.status().code(), StatusCode::kDataLoss) << name << ": " << v.status().ToString();
    EXPECT_NE(v.status().message().find("malformed Event"), std::string::npos) << name;
  }
  // Every truncation of a valid payload either parses (top-level field boundary) or is DataLoss,
  // exactly when the generated parser agrees.
  for (size_t n = 0; n < good.size(); ++n) {
    const std::string prefix = good.substr(0, n);
    auto v = DecodeEvent(Bytes(prefix));
    pb::Event event;
    const bool generated_ok = event.ParseFromString(prefix);
    ASSERT_EQ(v.ok(), generated_ok) << n << ": " << v.status().ToString();
    if (v.ok()) {
      ASSERT_TRUE(MatchesGenerated(Bytes(prefix), *v));
    } else {
      ASSERT_EQ(v.status().code(), StatusCode::kDataLoss);
    }
  }
}

// Random corruption: never crashes; whenever both parsers accept, they agree.
TEST(EventCodecTest, RandomMutationsAgreeWithGeneratedParser) {
  std::mt19937_64 rng(99);
  const std::string good = WorkedExample();
  const google::protobuf::LogSilencer silence;  // invalid UTF-8 in proto3 strings is logged
  int both_ok = 0;
  for (int i = 0; i < 50000; ++i) {
    std::string p = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % p.size();
      switch (rng() % 3) {
        case 0:
          p[at] = static_cast<char>(rng());
          break;
        case 1:
          p.erase(at, 1 + rng() % 3);
          break;
        default:
          p.insert(at, 1, static_cast<char>(rng()));
          break;
      }
      if (p.empty()) p.push_back('x');
    }
    auto v = DecodeEvent(Bytes(p));
    if (!v.ok()) {
      ASSERT_TRUE(v.status().code() == StatusCode::kDataLoss ||
                  v.status().code() == StatusCode::kUnimplemented)
          << v.status().ToString();
      continue;
    }
    pb::Event event;
    if (!event.ParseFromString(p)) continue;  // e.g. invalid UTF-8 in a proto3 string, groups
    ++both_ok;
    ASSERT_TRUE(MatchesGenerated(Bytes(p), *v)) << Hex(p);
  }
  EXPECT_GT(both_ok, 1000);
}

}  // namespace
}  // namespace litmus
