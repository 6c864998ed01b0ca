// Tests for JSON serialization: JsonQuote against Python's json.dumps escaping rules, and byte
// parity of SerializeIndexJson/SerializeCollectionsJson with every vendored smdebug file.
#include "litmus/format/index_model.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "fixture_util.h"
#include "litmus/format/trial_layout.h"

namespace litmus {
namespace {

using ordered_json = nlohmann::ordered_json;
using testing::FixtureFilesEndingIn;
using testing::FixturesRoot;

TEST(JsonQuoteTest, PythonEnsureAsciiEscapes) {
  EXPECT_EQ(JsonQuote(""), "\"\"");
  EXPECT_EQ(JsonQuote("gradient/MLP_fc1.weight"), "\"gradient/MLP_fc1.weight\"");
  EXPECT_EQ(JsonQuote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonQuote("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
  EXPECT_EQ(JsonQuote(std::string_view("\x00\x01\x1f", 3)), "\"\\u0000\\u0001\\u001f\"");
  EXPECT_EQ(JsonQuote("\x7f"), "\"\\u007f\"");
  EXPECT_EQ(JsonQuote("~ /"), "\"~ /\"");
  EXPECT_EQ(JsonQuote("\xc3\xa9"), "\"\\u00e9\"");                 // é
  EXPECT_EQ(JsonQuote("\xe2\x82\xac"), "\"\\u20ac\"");             // €
  EXPECT_EQ(JsonQuote("\xf0\x9f\x98\x80"), "\"\\ud83d\\ude00\"");  // 😀, a surrogate pair
  EXPECT_EQ(JsonQuote("\xff"
                      "a"),
            "\"\\ufffda\"");                                          // invalid byte
  EXPECT_EQ(JsonQuote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // encoded surrogate
  EXPECT_EQ(JsonQuote("\xc0\xaf"), "\"\\ufffd\\ufffd\"");             // overlong '/'
}

// nlohmann's ensure_ascii output follows the same rules as Python's (lowercase hex, 0x7f
// escaped, '/' not escaped), so it serves as an independent oracle on random valid UTF-8.
TEST(JsonQuoteTest, AgreesWithNlohmannEnsureAscii) {
  std::mt19937 rng(5);
  auto append_utf8 = [](std::string* s, uint32_t cp) {
    if (cp < 0x80) {
      s->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      s->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      s->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      s->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  };
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    const int n = static_cast<int>(rng() % 20);
    for (int k = 0; k < n; ++k) {
      uint32_t cp;
      switch (rng() % 4) {
        case 0:
          cp = rng() % 0x80;
          break;
        case 1:
          cp = rng() % 0x800;
          break;
        case 2:
          cp = rng() % 0x10000;
          break;
        default:
          cp = 0x10000 + rng() % 0x100000;
          break;
      }
      if (cp >= 0xD800 && cp <= 0xDFFF) cp = 'x';
      append_utf8(&s, cp);
    }
    ASSERT_EQ(JsonQuote(s), nlohmann::json(s).dump(-1, ' ', true)) << s;
  }
}

IndexFile IndexFromJson(const ordered_json& j) {
  IndexFile f;
  const auto& meta = j.at("meta");
  f.mode = ModeFromName(meta.at("mode").get<std::string>()).value();
  f.mode_step = meta.at("mode_step").get<int64_t>();
  if (meta.contains("event_file_name"))
    f.event_file_name = meta.at("event_file_name").get<std::string>();
  for (const auto& e : j.at("tensor_payload")) {
    f.tensor_payload.push_back({e.at("tensorname").get<std::string>(),
                                e.at("start_idx").get<uint64_t>(), e.at("length").get<uint64_t>()});
  }
  for (const auto& e : j.at("shape_payload")) {
    f.shape_payload.push_back({e.at("tensorname").get<std::string>(),
                               e.at("originalname").get<std::string>(),
                               e.at("shape").get<std::vector<int64_t>>()});
  }
  return f;
}

TEST(IndexModelTest, ReserializesEveryFixtureIndexByteForByte) {
  size_t files = 0;
  for (const auto& path : FixtureFilesEndingIn(".json")) {
    if (path.string().find("/index/") == std::string::npos) continue;
    const std::string original = testing::ReadWholeFile(path);
    const IndexFile model = IndexFromJson(ordered_json::parse(original));
    EXPECT_EQ(SerializeIndexJson(model), original) << path;
    ++files;
  }
  EXPECT_EQ(files, 28u + 16u + 16u + 9u + 4u);
}

TEST(IndexModelTest, ShapePayloadAndMetaWithoutEventFile) {
  IndexFile f;
  f.mode = Mode::kPredict;
  f.mode_step = 12;
  f.shape_payload.push_back({"a:0", "a", {3, 0, 1}});
  f.shape_payload.push_back({"s", "s", {}});
  EXPECT_EQ(SerializeIndexJson(f),
            "{\"meta\": {\"mode\": \"PREDICT\", \"mode_step\": 12}, \"tensor_payload\": [], "
            "\"shape_payload\": "
            "[{\"tensorname\": \"a:0\", \"originalname\": \"a\", \"shape\": [3, 0, 1]}, "
            "{\"tensorname\": \"s\", "
            "\"originalname\": \"s\", \"shape\": []}]}");
  IndexFile big;
  big.event_file_name = "events/x";
  big.tensor_payload.push_back({"t", uint64_t{1} << 40, 16});
  EXPECT_EQ(
      SerializeIndexJson(big),
      "{\"meta\": {\"mode\": \"GLOBAL\", \"mode_step\": 0, \"event_file_name\": \"events/x\"}, "
      "\"tensor_payload\": [{\"tensorname\": \"t\", \"start_idx\": 1099511627776, \"length\": "
      "16}], "
      "\"shape_payload\": []}");
}

std::optional<ModeSaveConfig> ModeConfigFromJson(const ordered_json& j) {
  if (j.is_null()) return std::nullopt;
  ModeSaveConfig c;
  c.save_interval = j.at("save_interval").get<int64_t>();
  c.save_steps = j.at("save_steps").get<std::vector<int64_t>>();
  c.start_step = j.at("start_step").get<int64_t>();
  if (!j.at("end_step").is_null()) c.end_step = j.at("end_step").get<int64_t>();
  return c;
}

CollectionsFile CollectionsFromJson(const ordered_json& j) {
  CollectionsFile f;
  for (const auto& [key, c] : j.at("collections").items()) {  // file order
    CollectionJson out;
    out.name = c.at("name").get<std::string>();
    EXPECT_EQ(out.name, key);
    out.include_regex = c.at("include_regex").get<std::vector<std::string>>();
    out.tensor_names = c.at("tensor_names").get<std::vector<std::string>>();
    if (!c.at("reduction_config").is_null()) {
      const auto& r = c.at("reduction_config");
      out.reduction_config = ReductionConfigJson{r.at("save_raw_tensor").get<bool>(),
                                                 r.at("reductions").get<std::string>(),
                                                 r.at("save_shape").get<bool>()};
    }
    if (!c.at("save_config").is_null()) {
      std::map<Mode, std::optional<ModeSaveConfig>> modes;
      for (const auto& [mode_name, cfg] : c.at("save_config").items()) {
        modes[ModeFromName(mode_name).value()] = ModeConfigFromJson(cfg);
      }
      out.save_config = std::move(modes);
    }
    out.save_histogram = c.at("save_histogram").get<bool>();
    f.collections.push_back(std::move(out));
  }
  f.num_workers = j.at("_meta").at("num_workers").get<int64_t>();
  return f;
}

TEST(CollectionsModelTest, ReserializesEveryFixtureCollectionsFileByteForByte) {
  size_t files = 0;
  for (const auto& path : FixtureFilesEndingIn("_collections.json")) {
    const std::string original = testing::ReadWholeFile(path);
    const CollectionsFile model = CollectionsFromJson(ordered_json::parse(original));
    EXPECT_EQ(SerializeCollectionsJson(model), original) << path;
    ++files;
  }
  EXPECT_EQ(files, 6u);  // includes synthetic_dtypes with null configs
}

TEST(CollectionsModelTest, SortsTensorNamesAndWritesAbsentModesAsNull) {
  CollectionsFile f;
  CollectionJson c;
  c.name = "weights";
  c.include_regex = {"^(?!gradient).*weight", "\\d+"};
  c.tensor_names = {"b", "a/\xc3\xa9", "a/z", "A"};
  c.reduction_config = ReductionConfigJson{false, "min,l2_norm,abs_mean", true};
  std::map<Mode, std::optional<ModeSaveConfig>> modes;
  modes[Mode::kEval] = ModeSaveConfig{10, {1, 2}, 3, 7};
  modes[Mode::kTrain] = std::nullopt;
  c.save_config = modes;
  c.save_histogram = false;
  f.collections.push_back(c);
  f.num_workers = 3;
  EXPECT_EQ(SerializeCollectionsJson(f),
            "{\"collections\": {\"weights\": {\"name\": \"weights\", \"include_regex\": "
            "[\"^(?!gradient).*weight\", "
            "\"\\\\d+\"], \"tensor_names\": [\"A\", \"a/z\", \"a/\\u00e9\", \"b\"], "
            "\"reduction_config\": "
            "{\"save_raw_tensor\": false, \"reductions\": \"min,l2_norm,abs_mean\", "
            "\"save_shape\": true}, "
            "\"save_config\": {\"TRAIN\": null, \"EVAL\": {\"save_interval\": 10, \"save_steps\": "
            "[1, 2], "
            "\"start_step\": 3, \"end_step\": 7}, \"PREDICT\": null, \"GLOBAL\": null}, "
            "\"save_histogram\": false}}, "
            "\"_meta\": {\"num_workers\": 3}}");
  EXPECT_EQ(SerializeCollectionsJson(CollectionsFile{}),
            "{\"collections\": {}, \"_meta\": {\"num_workers\": 1}}");
}

}  // namespace
}  // namespace litmus
