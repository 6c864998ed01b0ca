// Byte-parity tests: the writer replays the tensors of the smdebug-written fixture trials (same
// names, dtypes, shapes, contents, modes, steps and wall times) and must produce the same bytes:
// every framed record, every index file, every collections file and the same file tree.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "litmus/format/dtype.h"
#include "litmus/format/trial_layout.h"
#include "litmus/writer/writer.h"
#include "support/temp_dir.h"
#include "writer_test_util.h"

namespace litmus::writer {
namespace {

namespace fs = std::filesystem;
using litmus::testing::EventFile;
using litmus::testing::ListTree;
using litmus::testing::ReadEventFile;
using litmus::testing::ReadWholeFile;
using litmus::testing::TempDir;
using litmus::testing::ToString;

struct FixtureTensor {
  std::string name;
  double wall_time = 0;
  int32_t raw_dtype = 0;
  std::vector<int64_t> shape;
  std::string content;
  std::vector<std::string> strings;
  std::string framed;
  bool real_crc = false;
  int64_t num_elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

struct FixtureStep {
  int64_t step = 0;
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  std::vector<FixtureTensor> tensors;  // in index order
  std::string index_json;
  std::string event_rel;
  bool index_tiles_file = false;  // the index covers every byte of the event file
};

FixtureTensor FromRecord(const litmus::testing::Record& r) {
  FixtureTensor t;
  t.name = std::string(r.event.tag);
  t.wall_time = r.event.wall_time;
  t.raw_dtype = r.event.raw_dtype;
  t.shape = r.event.shape;
  t.content = ToString(r.event.content);
  for (std::string_view s : r.event.string_val) t.strings.emplace_back(s);
  t.framed = r.framed();
  t.real_crc = r.real_crc;
  return t;
}

std::vector<FixtureStep> LoadFixture(const fs::path& trial, const std::string& worker) {
  std::vector<FixtureStep> steps;
  for (const std::string& rel : ListTree(trial / "index")) {
    auto parsed = layout::ParseIndexFilePath("index/" + rel);
    if (!parsed.has_value() || parsed->worker != worker) continue;
    FixtureStep s;
    s.step = parsed->step;
    s.index_json = ReadWholeFile(trial / "index" / rel);
    const auto json = nlohmann::json::parse(s.index_json);
    s.mode = *ModeFromName(json["meta"]["mode"].get<std::string>());
    s.mode_step = json["meta"]["mode_step"].get<int64_t>();
    s.event_rel = json["meta"]["event_file_name"].get<std::string>();
    auto events = ReadEventFile(trial / s.event_rel);
    uint64_t covered = 0;
    for (const auto& entry : json["tensor_payload"]) {
      const uint64_t start = entry["start_idx"].get<uint64_t>();
      const auto it = std::find_if(events->records.begin(), events->records.end(),
                                   [&](const auto& r) { return r.offset == start; });
      EXPECT_NE(it, events->records.end()) << rel << " " << start;
      if (it == events->records.end()) continue;
      EXPECT_EQ(it->length, entry["length"].get<uint64_t>());
      s.tensors.push_back(FromRecord(*it));
      covered += it->length;
    }
    s.index_tiles_file = covered == events->bytes.size();
    steps.push_back(std::move(s));
  }
  return steps;
}

std::vector<std::string> CollectionOrder(const fs::path& collections_file) {
  const auto json = nlohmann::ordered_json::parse(ReadWholeFile(collections_file));
  std::vector<std::string> order;
  for (const auto& [name, value] : json["collections"].items()) order.push_back(name);
  return order;
}

// The hook configuration the fixtures were written with: PyTorch default collections in the
// file's order, save_interval 1 for every mode.
WriterOptions FixtureOptions(const fs::path& trial, const std::string& worker, int64_t num_workers,
                             std::shared_ptr<std::deque<double>> clock) {
  WriterOptions options;
  options.worker = worker;
  options.num_workers = num_workers;
  options.save_config = SaveConfig::Every(1);
  std::vector<CollectionConfig> ordered;
  const auto defaults = DefaultCollections();
  for (const std::string& name :
       CollectionOrder(trial / "collections/000000000" / (worker + "_collections.json"))) {
    auto it = std::find_if(defaults.begin(), defaults.end(),
                           [&](const CollectionConfig& c) { return c.name == name; });
    // Collections the PyTorch defaults do not have (synthetic_dtypes' "exotic") are left out.
    if (it != defaults.end()) ordered.push_back(*it);
  }
  options.collections = ordered;
  options.wall_clock = [clock] {
    EXPECT_FALSE(clock->empty()) << "the writer encoded more records than the fixture has";
    if (clock->empty()) return 0.0;
    const double t = clock->front();
    clock->pop_front();
    return t;
  };
  return options;
}

Status SaveFixtureTensor(Writer& w, const FixtureTensor& t) {
  if (t.raw_dtype == 0) return w.SaveStrings(t.name, t.strings);
  return w.SaveTensor(t.name, std::as_bytes(std::span(t.content)), t.shape,
                      static_cast<DType>(t.raw_dtype));
}

// Drives `w` through the fixture's steps the way a training loop would: gaps become empty GLOBAL
// steps; each step's mode must come out with the fixture's mode step.
void Replay(Writer& w, const std::vector<FixtureStep>& steps, std::deque<double>& clock,
            bool skip_empty_tensors) {
  for (const FixtureStep& s : steps) {
    while (w.step() + 1 < s.step) {
      LITMUS_ASSERT_OK(w.SetMode(Mode::kGlobal));
      LITMUS_ASSERT_OK(w.BeginStep());
      LITMUS_ASSERT_OK(w.EndStep());
    }
    LITMUS_ASSERT_OK(w.SetMode(s.mode));
    LITMUS_ASSERT_OK(w.BeginStep());
    ASSERT_EQ(w.step(), s.step);
    ASSERT_EQ(w.mode_step(), s.mode_step) << "step " << s.step;
    for (const FixtureTensor& t : s.tensors) {
      if (skip_empty_tensors && t.num_elements() == 0) continue;
      clock.push_back(t.wall_time);
      LITMUS_ASSERT_OK(SaveFixtureTensor(w, t));
    }
    EXPECT_TRUE(clock.empty()) << "step " << s.step << ": not every tensor was written";
    clock.clear();
    LITMUS_ASSERT_OK(w.EndStep());
  }
}

std::vector<std::string> FixtureWorkers(const fs::path& trial) {
  std::vector<std::string> workers;
  for (const std::string& rel : ListTree(trial / "collections")) {
    auto w = layout::ParseCollectionsFilePath("collections/" + rel);
    if (w.has_value()) workers.push_back(*w);
  }
  return workers;
}

class PyTorchFixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PyTorchFixtureTest, ReplayGivesIdenticalFiles) {
  const fs::path fixture = litmus::testing::FixturePath(GetParam());
  const bool finished = fs::exists(fixture / layout::kEndOfJobFile);
  const std::vector<std::string> workers = FixtureWorkers(fixture);
  ASSERT_FALSE(workers.empty());
  TempDir out;
  for (const std::string& worker : workers) {
    auto clock = std::make_shared<std::deque<double>>();
    const auto steps = LoadFixture(fixture, worker);
    ASSERT_FALSE(steps.empty());
    WriterOptions options = FixtureOptions(fixture, worker, static_cast<int64_t>(workers.size()), clock);
    LITMUS_ASSERT_OK_AND_ASSIGN(auto w, Writer::Open(out.str(), options));
    Replay(*w, steps, *clock, /*skip_empty_tensors=*/false);
    // (For pt_run_partial, whose writer never closed, the end marker is ignored below.)
    LITMUS_ASSERT_OK(w->Close());
  }
  if (finished && workers.size() > 1) LITMUS_ASSERT_OK(MarkTrainingEnded(nullptr, out.str()));

  // Same tree, apart from smdebug's claim file and the unfinished step's temp files.
  std::set<std::string> expected_files;
  for (const std::string& f : ListTree(fixture)) {
    if (f == layout::kClaimFile || f.ends_with(".tmp")) continue;
    if (!finished && f == layout::kEndOfJobFile) continue;
    expected_files.insert(f);
  }
  std::set<std::string> written = ListTree(out.path());
  if (!finished) written.erase(std::string(layout::kEndOfJobFile));
  EXPECT_EQ(written, expected_files);
  // Every published file byte for byte: events, indexes, collections.
  for (const std::string& f : expected_files) {
    EXPECT_EQ(ReadWholeFile(out.path() / f), ReadWholeFile(fixture / f)) << f;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PyTorchFixtureTest,
                         ::testing::Values("pt_exploding", "pt_run_complete", "pt_ddp_two_workers",
                                           "pt_run_partial"));

// pt_run_partial caught step 9 mid-write: an event .tmp holding the first records, no final
// file. A writer flushing every record leaves exactly that .tmp (and nothing final) mid-step.
TEST(WriterFixtureTest, HalfWrittenStepMatchesPartialFixture) {
  const fs::path fixture = litmus::testing::FixturePath("pt_run_partial");
  const std::string event_tmp = "events/000000000009/000000000009_worker_0.tfevents.tmp";
  auto partial = ReadEventFile(fixture / event_tmp);
  ASSERT_FALSE(partial->records.empty());
  auto clock = std::make_shared<std::deque<double>>();
  TempDir out;
  WriterOptions options = FixtureOptions(fixture, "worker_0", 1, clock);
  options.write_buffer_bytes = 1;  // flush every record, like the fixture's Python file object
  LITMUS_ASSERT_OK_AND_ASSIGN(auto w, Writer::Open(out.str(), options));
  Replay(*w, LoadFixture(fixture, "worker_0"), *clock, false);
  const auto& first = partial->records.front().event;
  LITMUS_ASSERT_OK(w->SetMode(first.mode.value_or(Mode::kGlobal)));
  LITMUS_ASSERT_OK(w->BeginStep());
  ASSERT_EQ(w->step(), 9);
  ASSERT_EQ(w->mode_step(), first.mode_step.value_or(-1));
  for (const auto& r : partial->records) {
    clock->push_back(r.event.wall_time);
    LITMUS_ASSERT_OK(SaveFixtureTensor(*w, FromRecord(r)));
  }
  EXPECT_EQ(ReadWholeFile(out.path() / event_tmp), partial->bytes);
  for (const std::string& f : ListTree(out.path())) {
    if (f.find("000000000009") != std::string::npos) {
      EXPECT_TRUE(f.ends_with(".tmp")) << f;
    }
  }
  EXPECT_FALSE(fs::exists(out.path() / "events/000000000009/000000000009_worker_0.tfevents"));
  EXPECT_FALSE(fs::exists(out.path() / "index/000000000/000000000009_worker_0.json"));
  LITMUS_ASSERT_OK(w->Close());
}

// synthetic_dtypes was written with smdebug's FileWriter: every dtype, 0-d, specials, strings,
// real payload CRCs at step 5, zero-element tensors (which litmus refuses to write) and unindexed
// records. Each record the writer accepts must be byte-identical to smdebug's.
TEST(WriterFixtureTest, SyntheticDtypesRecordsIdentical) {
  const fs::path fixture = litmus::testing::FixturePath("synthetic_dtypes");
  const auto steps = LoadFixture(fixture, "worker_0");
  ASSERT_EQ(steps.size(), 4u);
  int compared = 0;
  for (const bool crc : {false, true}) {
    auto clock = std::make_shared<std::deque<double>>();
    TempDir out;
    WriterOptions options = FixtureOptions(fixture, "worker_0", 1, clock);
    options.collections = {CollectionConfig{.name = "default"}};
    options.write_payload_crc = crc;
    options.allow_dtypes_smdebug_cannot_read = true;
    LITMUS_ASSERT_OK_AND_ASSIGN(auto w, Writer::Open(out.str(), options));
    Replay(*w, steps, *clock, /*skip_empty_tensors=*/true);
    LITMUS_ASSERT_OK(w->Close());
    for (const FixtureStep& s : steps) {
      auto written = ReadEventFile(out.path() / s.event_rel);
      for (const FixtureTensor& t : s.tensors) {
        const auto* r = written->Find(t.name);
        if (t.num_elements() == 0) {
          EXPECT_EQ(r, nullptr) << t.name;
          continue;
        }
        ASSERT_NE(r, nullptr) << t.name;
        EXPECT_EQ(r->real_crc, crc);
        if (t.real_crc != crc) continue;
        EXPECT_EQ(r->framed(), t.framed) << "step " << s.step << " " << t.name;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 80);
}

}  // namespace
}  // namespace litmus::writer
