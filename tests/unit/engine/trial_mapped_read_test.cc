// Trial reads from mapped event files (RandomAccessFile::Mapped, LocalEnv's mmap): the values
// equal those of the Read() path (an Env that does not map), aligned or not; a damaged record
// and a short file give the same errors as before; a file that grows while it is mapped is
// mapped again and its new records are read; Trial::CopyValues copies what Value() gives, and so
// does Trial::CopyValuesFileMajor (one read a run of records, each content copied).
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "litmus/engine/trial.h"
#include "litmus/format/forwarding_env.h"
#include "litmus/format/tfrecord.h"
#include "synthetic_trial.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using testing::SyntheticTensor;
using testing::SyntheticTrial;

// Local files, with Read() calls on event files and mappings made counted, and mapping on or off.
class LocalFilesEnv : public ForwardingEnv {
 public:
  explicit LocalFilesEnv(bool map) : ForwardingEnv(Env::Default()), map_(map) {}
  int event_file_reads() const { return event_file_reads_; }
  int mappings_made() const { return mappings_made_; }

  StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) override {
    LITMUS_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, base()->NewRandomAccessFile(path));
    return std::unique_ptr<RandomAccessFile>(new File(this, std::move(file), path.ends_with(".tfevents")));
  }

 private:
  class File : public RandomAccessFile {
   public:
    File(LocalFilesEnv* env, std::unique_ptr<RandomAccessFile> base, bool event_file)
        : env_(env), base_(std::move(base)), event_file_(event_file) {}
    StatusOr<size_t> Read(uint64_t offset, std::span<std::byte> out) const override {
      if (event_file_) ++env_->event_file_reads_;
      return base_->Read(offset, out);
    }
    StatusOr<uint64_t> Size() const override { return base_->Size(); }
    std::optional<FileMapping> Mapped() const override {
      if (!env_->map_) return std::nullopt;
      std::optional<FileMapping> mapping = base_->Mapped();
      if (mapping) ++env_->mappings_made_;
      return mapping;
    }

   private:
    LocalFilesEnv* const env_;
    const std::unique_ptr<RandomAccessFile> base_;
    const bool event_file_;
  };
  const bool map_;
  std::atomic<int> event_file_reads_{0};
  std::atomic<int> mappings_made_{0};
};

std::unique_ptr<Trial> Open(Env* env, const std::string& root) {
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  options.map_event_files = true;
  StatusOr<std::unique_ptr<Trial>> trial = Trial::Open(env, root, options);
  EXPECT_TRUE(trial.ok()) << trial.status().ToString();
  return trial.ok() ? std::move(trial).value() : nullptr;
}

// Tensors whose names have lengths 1..6, so that their data lands at every offset modulo 4 in
// the event file; 7000 float32 each, so that a step's file (~170 KB) is large enough to map.
std::vector<SyntheticTensor> Tensors(int64_t step) {
  std::vector<SyntheticTensor> out;
  for (int t = 0; t < 6; ++t) {
    SyntheticTensor tensor{std::string(static_cast<size_t>(t) + 1, static_cast<char>('a' + t)), {}};
    for (int i = 0; i < 7000; ++i) tensor.values.push_back(static_cast<float>(step * 100000 + t * 10000 + i) * 0.5f);
    out.push_back(std::move(tensor));
  }
  return out;
}

// Flips one bit halfway through the third record of worker_0's step-2 event file (the content
// of tensor "ccc" of Tensors()): a damaged payload whose framing is intact.
void FlipBitInThirdRecordOfStep2(SyntheticTrial& t) {
  std::string bytes = testing::ReadWholeFile(t.dir().path() / layout::EventFilePath(2, "worker_0"));
  const auto length_at = [&bytes](uint64_t at) {
    return tfrecord::DecodeLe64(reinterpret_cast<const std::byte*>(bytes.data() + at));
  };
  uint64_t at = 0;
  for (int r = 0; r < 2; ++r) at += length_at(at) + tfrecord::kFramingOverhead;
  const uint64_t length = length_at(at);
  bytes[static_cast<size_t>(at + length / 2)] ^= 0x04;
  t.WriteRaw(layout::EventFilePath(2, "worker_0"), bytes);
}

void ExpectValue(const Trial& trial, const SyntheticTensor& expected, int64_t step) {
  StatusOr<TensorPtr> value = trial.Value(expected.name, step);
  ASSERT_TRUE(value.ok()) << expected.name << " at " << step << ": " << value.status().ToString();
  const Tensor& t = **value;
  ASSERT_EQ(t.dtype(), DType::kFloat32);
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(expected.values.size()));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.bytes().data()) % sizeof(float), 0u) << expected.name;
  EXPECT_EQ(std::memcmp(t.bytes().data(), expected.values.data(), t.bytes().size()), 0) << expected.name;
}

TEST(TrialMappedReadTest, ValuesEqualThoseOfReads) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  for (int64_t step = 0; step < 3; ++step) t.WriteStep(step, "worker_0", Mode::kTrain, step, Tensors(step));
  t.WriteEndMarker();
  LocalFilesEnv mapped_env(/*map=*/true), read_env(/*map=*/false);
  std::unique_ptr<Trial> mapped = Open(&mapped_env, t.root());
  std::unique_ptr<Trial> read = Open(&read_env, t.root());
  ASSERT_NE(mapped, nullptr);
  ASSERT_NE(read, nullptr);
  // Step 0 one value at a time, step 1 through a prefetch (one file, several records), step 2
  // through a prefetch of one key at a time.
  for (const SyntheticTensor& tensor : Tensors(0)) {
    ExpectValue(*mapped, tensor, 0);
    ExpectValue(*read, tensor, 0);
  }
  for (Trial* trial : {mapped.get(), read.get()}) {
    std::vector<Trial::StepTensor> keys;
    const std::vector<SyntheticTensor> tensors = Tensors(1);
    for (const SyntheticTensor& tensor : tensors) keys.emplace_back(tensor.name, 1);
    std::vector<Trial::Prefetched> prefetched;
    trial->Prefetch(keys, &prefetched, /*with_values=*/true);
    for (size_t i = 0; i < keys.size(); ++i) {
      EXPECT_TRUE(prefetched[i].decoded) << i;
      ExpectValue(*trial, tensors[i], 1);
    }
    for (const SyntheticTensor& tensor : Tensors(2)) {
      trial->Prefetch({{tensor.name, 2}}, &prefetched, /*with_values=*/true);
      EXPECT_TRUE(prefetched[0].decoded) << tensor.name;
      ExpectValue(*trial, tensor, 2);
    }
  }
  EXPECT_EQ(mapped_env.event_file_reads(), 0) << "a mapped file is decoded in place, never read";
  EXPECT_GT(read_env.event_file_reads(), 0);
  // The same reductions either way.
  for (const SyntheticTensor& tensor : Tensors(1)) {
    LITMUS_ASSERT_OK_AND_ASSIGN(double a, mapped->Reduction(tensor.name, 1, layout::Reduction::kMean, true));
    LITMUS_ASSERT_OK_AND_ASSIGN(double b, read->Reduction(tensor.name, 1, layout::Reduction::kMean, true));
    EXPECT_EQ(a, b) << tensor.name;
  }
}

// Damage reads the same through a mapping: a record whose length CRC is wrong, and a file cut
// short in the middle of a record (once training has ended, both are DataLoss).
TEST(TrialMappedReadTest, DamageGivesTheSameErrors) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  t.WriteStep(0, "worker_0", Mode::kTrain, 0, Tensors(0));
  t.WriteStep(1, "worker_0", Mode::kTrain, 1, Tensors(1));
  t.WriteEndMarker();
  // Step 0: flip a bit of the third record's length CRC (the record starts where the first two end).
  const std::filesystem::path step0 = t.dir().path() / layout::EventFilePath(0, "worker_0");
  const uint64_t size0 = std::filesystem::file_size(step0);
  const uint64_t record = size0 / 6;  // every record of the step has about the same size
  {
    std::fstream f(step0, std::ios::in | std::ios::out | std::ios::binary);
    std::string bytes(static_cast<size_t>(size0), '\0');
    f.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    // Find the third record's start from the framing: length (u64 LE) + 16.
    uint64_t at = 0;
    for (int r = 0; r < 2; ++r) {
      uint64_t length = 0;
      std::memcpy(&length, bytes.data() + at, sizeof(length));
      at += length + tfrecord::kFramingOverhead;
    }
    ASSERT_LT(at + 9, size0);
    f.seekp(static_cast<std::streamoff>(at + 9));
    const char flipped = static_cast<char>(bytes[static_cast<size_t>(at + 9)] ^ 0x10);
    f.write(&flipped, 1);
  }
  // Step 1: cut in the middle of the last record (the file stays large enough to map).
  const std::filesystem::path step1 = t.dir().path() / layout::EventFilePath(1, "worker_0");
  std::filesystem::resize_file(step1, std::filesystem::file_size(step1) - record / 2);

  LocalFilesEnv mapped_env(/*map=*/true), read_env(/*map=*/false);
  std::unique_ptr<Trial> mapped = Open(&mapped_env, t.root());
  std::unique_ptr<Trial> read = Open(&read_env, t.root());
  ASSERT_NE(mapped, nullptr);
  ASSERT_NE(read, nullptr);
  const std::vector<SyntheticTensor> tensors0 = Tensors(0), tensors1 = Tensors(1);
  for (const auto& [name, step] : std::vector<std::pair<std::string, int64_t>>{
           {tensors0[2].name, 0}, {tensors1[5].name, 1}}) {
    const Status a = mapped->Value(name, step).status();
    const Status b = read->Value(name, step).status();
    EXPECT_EQ(a.code(), StatusCode::kDataLoss) << a.ToString();
    EXPECT_EQ(a.ToString(), b.ToString());
    // Through a prefetch too: nothing decoded, and the value still reports the damage.
    std::vector<Trial::Prefetched> prefetched;
    mapped->Prefetch({{tensors0[0].name, step}, {name, step}}, &prefetched, /*with_values=*/true);
    EXPECT_FALSE(prefetched[1].decoded);
    EXPECT_EQ(mapped->Value(name, step).status().ToString(), b.ToString());
  }
  // The records before the damage read fine.
  ExpectValue(*mapped, tensors0[1], 0);
  ExpectValue(*mapped, tensors1[4], 1);
}

// A live trial whose event file is still short when first read (an upload on its way): the
// missing record is "not yet available" as with reads, and once the file has grown it is read
// from a new mapping.
TEST(TrialMappedReadTest, GrowingFileIsMappedAgain) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  t.WriteStep(0, "worker_0", Mode::kTrain, 0, Tensors(0));
  const std::filesystem::path events = t.dir().path() / layout::EventFilePath(0, "worker_0");
  std::string full;
  {
    std::ifstream in(events, std::ios::binary);
    full.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const size_t cut = full.size() - full.size() / 12;  // in the middle of the last record
  std::filesystem::resize_file(events, cut);

  LocalFilesEnv env(/*map=*/true);
  std::unique_ptr<Trial> trial = Open(&env, t.root());
  ASSERT_NE(trial, nullptr);
  const std::vector<SyntheticTensor> tensors = Tensors(0);
  ExpectValue(*trial, tensors[0], 0);
  const Status missing = trial->Value(tensors[5].name, 0).status();
  EXPECT_EQ(GetTrialError(missing), TrialError::kStepNotYetAvailable) << missing.ToString();
  const int reads_before = env.event_file_reads();
  {
    std::ofstream out(events, std::ios::binary | std::ios::app);
    out.write(full.data() + cut, static_cast<std::streamsize>(full.size() - cut));
  }
  ExpectValue(*trial, tensors[5], 0);
  EXPECT_EQ(env.event_file_reads(), reads_before) << "the grown file is mapped again, not read";
  for (const SyntheticTensor& tensor : tensors) ExpectValue(*trial, tensor, 0);
}

// CopyValues (Python's values(steps)): the bytes Value() gives, step after step, whether the
// records are copied from a mapping or through Value(); per step the error Value() gives; a value
// of another shape is InvalidArgument.
TEST(TrialMappedReadTest, CopyValuesCopiesWhatValueGives) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  for (int64_t step = 0; step < 4; ++step) t.WriteStep(step, "worker_0", Mode::kTrain, step, Tensors(step));
  // Step 4: tensor "a" with another shape; step 5: "a" missing from its (short) event file.
  std::vector<SyntheticTensor> odd = Tensors(4);
  odd[0].values.resize(10);
  t.WriteStep(4, "worker_0", Mode::kTrain, 4, odd);
  t.WriteStep(5, "worker_0", Mode::kTrain, 5, Tensors(5));
  std::filesystem::resize_file(t.dir().path() / layout::EventFilePath(5, "worker_0"), 100);
  t.WriteEndMarker();
  for (const bool map : {true, false}) {
    LocalFilesEnv env(map);
    std::unique_ptr<Trial> trial = Open(&env, t.root());
    ASSERT_NE(trial, nullptr);
    const std::vector<int64_t> steps = {3, 0, 2, 1};
    for (int tensor = 0; tensor < 6; ++tensor) {
      const std::string name = Tensors(0)[static_cast<size_t>(tensor)].name;
      std::vector<float> out(7000 * steps.size(), -1.0f);
      const std::vector<Status> statuses =
          trial->CopyValues(name, steps, Mode::kGlobal, DType::kFloat32, {7000}, std::as_writable_bytes(std::span(out)));
      ASSERT_EQ(statuses.size(), steps.size());
      for (size_t i = 0; i < steps.size(); ++i) {
        EXPECT_TRUE(statuses[i].ok()) << name << " at " << steps[i] << ": " << statuses[i].ToString();
        const std::vector<float> expected = Tensors(steps[i])[static_cast<size_t>(tensor)].values;
        EXPECT_EQ(std::memcmp(out.data() + i * 7000, expected.data(), 7000 * sizeof(float)), 0) << name << " " << i;
      }
    }
    EXPECT_EQ(env.event_file_reads() == 0, map) << "mapped records are copied in place";
    std::vector<float> out(7000 * 3);
    const std::vector<Status> statuses = trial->CopyValues("a", std::vector<int64_t>{1, 4, 5}, Mode::kGlobal,
                                                           DType::kFloat32, {7000}, std::as_writable_bytes(std::span(out)));
    LITMUS_EXPECT_OK(statuses[0]);
    EXPECT_EQ(statuses[1].code(), StatusCode::kInvalidArgument) << statuses[1].ToString();
    EXPECT_EQ(statuses[2].ToString(), trial->Value("a", 5).status().ToString());
    EXPECT_EQ(statuses[2].code(), StatusCode::kDataLoss) << statuses[2].ToString();
  }
}

std::string ReadWholeFile(const std::filesystem::path& path);

// Records with a real payload CRC (the copy from a mapping checks it in the same pass as it
// copies): a record damaged in the middle of its content, in the middle of a batch, gives the
// error Value() gives and the other steps copy fine, also into a destination that is not
// aligned; nothing is written outside the destination.
TEST(TrialMappedReadTest, CopyValuesChecksThePayloadCrc) {
  SyntheticTrial t;
  t.set_footer(tfrecord::FooterKind::kPayloadCrc);
  t.WriteCollections({"worker_0"}, 1);
  for (int64_t step = 0; step < 5; ++step) t.WriteStep(step, "worker_0", Mode::kTrain, step, Tensors(step));
  t.WriteEndMarker();
  // Step 2: one bit of the content of tensor "ccc" (the third record) flipped, halfway through it.
  FlipBitInThirdRecordOfStep2(t);
  const std::vector<int64_t> steps = {0, 1, 2, 3, 4};
  constexpr size_t kEach = 7000 * sizeof(float);
  for (const bool map : {true, false}) {
    LocalFilesEnv env(map);
    std::unique_ptr<Trial> trial = Open(&env, t.root());
    ASSERT_NE(trial, nullptr);
    const Status damaged = trial->Value("ccc", 2).status();
    ASSERT_EQ(damaged.code(), StatusCode::kDataLoss) << damaged.ToString();
    EXPECT_NE(damaged.message().find("bad payload CRC"), std::string::npos) << damaged.ToString();
    for (const size_t misalignment : {size_t{0}, size_t{1}, size_t{3}}) {
      for (const SyntheticTensor& tensor : Tensors(0)) {
        std::vector<std::byte> buffer(kEach * steps.size() + 64, std::byte{0xEE});
        const std::span<std::byte> out(buffer.data() + 16 + misalignment, kEach * steps.size());
        const std::vector<Status> statuses =
            trial->CopyValues(tensor.name, steps, Mode::kGlobal, DType::kFloat32, {7000}, out);
        ASSERT_EQ(statuses.size(), steps.size());
        for (size_t i = 0; i < steps.size(); ++i) {
          if (tensor.name == "ccc" && steps[i] == 2) {
            EXPECT_EQ(statuses[i].ToString(), damaged.ToString()) << "map " << map;
            continue;
          }
          ASSERT_TRUE(statuses[i].ok()) << tensor.name << " at " << steps[i] << ": " << statuses[i].ToString();
          const std::vector<float> expected = Tensors(steps[i])[tensor.name.size() - 1].values;
          EXPECT_EQ(std::memcmp(out.data() + i * kEach, expected.data(), kEach), 0)
              << tensor.name << " at " << steps[i] << ", misaligned by " << misalignment;
        }
        for (std::byte* p = buffer.data(); p != out.data(); ++p) ASSERT_EQ(*p, std::byte{0xEE});
        for (std::byte* p = out.data() + out.size(); p != buffer.data() + buffer.size(); ++p) {
          ASSERT_EQ(*p, std::byte{0xEE});
        }
      }
    }
    EXPECT_EQ(env.event_file_reads() == 0, map) << "mapped records are copied in place";
  }
}

std::string ReadWholeFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// CopyValues of every tensor at `steps` into one array each, compared with Tensors(step).
void ExpectCopyValues(const Trial& trial, const std::vector<int64_t>& steps) {
  for (const SyntheticTensor& tensor : Tensors(0)) {
    std::vector<float> out(7000 * steps.size(), -1.0f);
    const std::vector<Status> statuses = trial.CopyValues(tensor.name, steps, Mode::kGlobal, DType::kFloat32, {7000},
                                                          std::as_writable_bytes(std::span(out)));
    ASSERT_EQ(statuses.size(), steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      ASSERT_TRUE(statuses[i].ok()) << tensor.name << " at " << steps[i] << ": " << statuses[i].ToString();
      const std::vector<float> expected = Tensors(steps[i])[static_cast<size_t>(tensor.name.size() - 1)].values;
      EXPECT_EQ(std::memcmp(out.data() + i * 7000, expected.data(), 7000 * sizeof(float)), 0)
          << tensor.name << " at " << steps[i];
    }
  }
}

// Mappings are found by the catalog's string of the event file, one per index file: index files
// that name the same event file still share one mapping of it (not one each), through
// CopyValues and Value() alike.
TEST(TrialMappedReadTest, EventFileNamedBySeveralIndexFilesIsMappedOnce) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  constexpr int64_t kSteps = 4;
  for (int64_t step = 0; step < kSteps; ++step) t.WriteStep(step, "worker_0", Mode::kTrain, step, Tensors(step));
  // Every step's records moved into one event file, and every index file rewritten to name it.
  const std::string shared = "events/shared/all_steps.tfevents";
  std::string events;
  for (int64_t step = 0; step < kSteps; ++step) {
    const std::filesystem::path own = t.dir().path() / layout::EventFilePath(step, "worker_0");
    const std::string records = ReadWholeFile(own);
    std::filesystem::remove(own);
    IndexFile index;
    index.mode = Mode::kTrain;
    index.mode_step = step;
    index.event_file_name = shared;
    uint64_t at = 0;
    for (const SyntheticTensor& tensor : Tensors(step)) {
      uint64_t length = 0;
      std::memcpy(&length, records.data() + at, sizeof(length));
      index.tensor_payload.push_back({tensor.name, events.size() + at, length + tfrecord::kFramingOverhead});
      at += length + tfrecord::kFramingOverhead;
    }
    ASSERT_EQ(at, records.size());
    events += records;
    t.WriteRaw(layout::IndexFilePath(step, "worker_0"), SerializeIndexJson(index));
  }
  t.WriteRaw(shared, events);
  t.WriteEndMarker();

  LocalFilesEnv env(/*map=*/true);
  std::unique_ptr<Trial> trial = Open(&env, t.root());
  ASSERT_NE(trial, nullptr);
  ExpectCopyValues(*trial, {0, 1, 2, 3});
  ExpectCopyValues(*trial, {3, 1});
  for (int64_t step = 0; step < kSteps; ++step) {
    for (const SyntheticTensor& tensor : Tensors(step)) ExpectValue(*trial, tensor, step);
  }
  EXPECT_EQ(env.mappings_made(), 1) << "one mapping of the one event file";
  EXPECT_EQ(env.event_file_reads(), 0);
}

// A live trial: CopyValues of a step whose event file is still short gives what Value() gives
// for the missing records and copies the others; once the file has grown it is mapped again
// and every record copied from the new mapping.
TEST(TrialMappedReadTest, CopyValuesMapsAGrownFileAgain) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  t.WriteStep(0, "worker_0", Mode::kTrain, 0, Tensors(0));
  t.WriteStep(1, "worker_0", Mode::kTrain, 1, Tensors(1));
  const std::filesystem::path events = t.dir().path() / layout::EventFilePath(1, "worker_0");
  const std::string full = ReadWholeFile(events);
  const size_t cut = full.size() - full.size() / 12;  // in the middle of the last record ("ffffff")
  std::filesystem::resize_file(events, cut);

  LocalFilesEnv env(/*map=*/true);
  std::unique_ptr<Trial> trial = Open(&env, t.root());
  ASSERT_NE(trial, nullptr);
  std::vector<float> out(7000 * 2);
  const std::vector<int64_t> steps = {0, 1};
  std::vector<Status> statuses =
      trial->CopyValues("ffffff", steps, Mode::kGlobal, DType::kFloat32, {7000}, std::as_writable_bytes(std::span(out)));
  LITMUS_EXPECT_OK(statuses[0]);
  EXPECT_EQ(GetTrialError(statuses[1]), TrialError::kStepNotYetAvailable) << statuses[1].ToString();
  EXPECT_EQ(statuses[1].ToString(), trial->Value("ffffff", 1).status().ToString());
  ExpectCopyValues(*trial, {0});
  const int mappings_before = env.mappings_made();
  const int reads_before = env.event_file_reads();  // (the short record's, as Value() reads it)
  {
    std::ofstream append(events, std::ios::binary | std::ios::app);
    append.write(full.data() + cut, static_cast<std::streamsize>(full.size() - cut));
  }
  ExpectCopyValues(*trial, {1, 0});
  EXPECT_EQ(env.mappings_made(), mappings_before + 1) << "the grown file is mapped again, once";
  EXPECT_EQ(env.event_file_reads(), reads_before) << "the grown file is mapped again, not read";
}

// Two trials of one folder keep their own mappings, and a refresh that adds steps (new index
// files, new catalog strings) is served by CopyValues like the steps known before.
TEST(TrialMappedReadTest, CopyValuesAcrossTrialsAndRefreshes) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  for (int64_t step = 0; step < 2; ++step) t.WriteStep(step, "worker_0", Mode::kTrain, step, Tensors(step));
  LocalFilesEnv env(/*map=*/true);
  std::unique_ptr<Trial> first = Open(&env, t.root());
  std::unique_ptr<Trial> second = Open(&env, t.root());
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ExpectCopyValues(*first, {0, 1});
  ExpectCopyValues(*second, {1, 0});
  for (int64_t step = 2; step < 5; ++step) t.WriteStep(step, "worker_0", Mode::kTrain, step, Tensors(step));
  t.WriteEndMarker();
  LITMUS_ASSERT_OK(first->Refresh());
  ExpectCopyValues(*first, {4, 0, 2, 1, 3});
  first.reset();  // (the other trial's mappings are its own)
  LITMUS_ASSERT_OK(second->Refresh());
  ExpectCopyValues(*second, {0, 1, 2, 3, 4});
  EXPECT_EQ(env.event_file_reads(), 0);
  EXPECT_EQ(env.mappings_made(), 2 * 5) << "each trial maps each event file once";
}

}  // namespace
}  // namespace litmus

namespace litmus {
namespace {

// CopyValuesFileMajor (Python's Trial.values(names)): for every tensor at every step, the bytes
// Value() gives or, per step, the error Value() gives (step 300's records are longer: a two-byte
// step); a payload CRC that does not match (a bit flipped in the middle of a content) and a short event file give
// Value()'s error; a value of another shape and an unknown tensor too. Outputs need no alignment,
// and nothing is written outside them.
TEST(TrialMappedReadTest, CopyValuesFileMajorCopiesWhatValueGives) {
  SyntheticTrial t;
  t.set_footer(tfrecord::FooterKind::kPayloadCrc);
  t.WriteCollections({"worker_0"}, 1);
  const std::vector<int64_t> written = {0, 1, 2, 3, 300};
  for (const int64_t step : written) t.WriteStep(step, "worker_0", Mode::kTrain, step, Tensors(step));
  std::vector<SyntheticTensor> odd = Tensors(4);  // step 4: "a" of another shape
  odd[0].values.resize(10);
  t.WriteStep(4, "worker_0", Mode::kTrain, 4, odd);
  t.WriteStep(5, "worker_0", Mode::kTrain, 5, Tensors(5));  // step 5: cut short
  std::filesystem::resize_file(t.dir().path() / layout::EventFilePath(5, "worker_0"), 100);
  t.WriteEndMarker();
  FlipBitInThirdRecordOfStep2(t);  // (the content of "ccc")
  const std::vector<int64_t> steps = {300, 3, 0, 2, 1, 4, 5, 3};
  constexpr size_t kEach = 7000 * sizeof(float);
  for (const bool map : {true, false}) {
    LocalFilesEnv env(map);
    std::unique_ptr<Trial> trial = Open(&env, t.root());
    ASSERT_NE(trial, nullptr);
    std::vector<std::string> names;
    for (const SyntheticTensor& tensor : Tensors(0)) names.push_back(tensor.name);
    names.push_back("unknown");
    std::vector<std::vector<std::byte>> buffers(names.size(), std::vector<std::byte>(kEach * steps.size() + 64, std::byte{0xEE}));
    std::vector<Trial::ValuesTarget> targets;
    for (size_t k = 0; k < names.size(); ++k) {
      const size_t misalignment = k % 4;
      targets.push_back({names[k], steps, DType::kFloat32, {7000},
                         std::span<std::byte>(buffers[k].data() + 16 + misalignment, kEach * steps.size())});
    }
    const std::vector<std::vector<Status>> statuses = trial->CopyValuesFileMajor(targets, Mode::kGlobal);
    ASSERT_EQ(statuses.size(), targets.size());
    for (size_t k = 0; k < targets.size(); ++k) {
      ASSERT_EQ(statuses[k].size(), steps.size());
      for (size_t i = 0; i < steps.size(); ++i) {
        const std::string where = names[k] + " at " + std::to_string(steps[i]) + ", map " + std::to_string(map);
        const Status value = trial->Value(names[k], steps[i]).status();
        if (!value.ok()) {
          EXPECT_EQ(statuses[k][i].ToString(), value.ToString()) << where;
          continue;
        }
        if (names[k] == "a" && steps[i] == 4) {
          EXPECT_EQ(statuses[k][i].code(), StatusCode::kInvalidArgument) << where << ": " << statuses[k][i].ToString();
          continue;
        }
        ASSERT_TRUE(statuses[k][i].ok()) << where << ": " << statuses[k][i].ToString();
        const std::vector<float> expected = Tensors(steps[i])[k].values;
        EXPECT_EQ(std::memcmp(targets[k].out.data() + i * kEach, expected.data(), kEach), 0) << where;
      }
      for (std::byte* p = buffers[k].data(); p != targets[k].out.data(); ++p) ASSERT_EQ(*p, std::byte{0xEE});
      for (std::byte* p = targets[k].out.data() + targets[k].out.size(); p != buffers[k].data() + buffers[k].size(); ++p) {
        ASSERT_EQ(*p, std::byte{0xEE});
      }
    }
    const Status damaged = trial->Value("ccc", 2).status();
    EXPECT_NE(damaged.message().find("bad payload CRC"), std::string::npos) << damaged.ToString();
    EXPECT_EQ(trial->Value("a", 5).status().code(), StatusCode::kDataLoss);
  }
}

// CopyValuesFileMajor reads each event file's wanted records with one read a run (no
// scatter read, no read to learn a layout first), whatever their lengths: smdebug's records of a
// tensor differ in length from step to step (the mode step's decimal digits come after the
// content), and step 300's record also has its content a byte further (a step number of two
// bytes).
TEST(TrialMappedReadTest, CopyValuesFileMajorReadsEachFileOnceWhateverItsRecordsLengths) {
  SyntheticTrial t;
  t.set_footer(tfrecord::FooterKind::kPayloadCrc);
  t.WriteCollections({"worker_0"}, 1);
  for (const int64_t step : {3, 30, 300}) t.WriteStep(step, "worker_0", Mode::kTrain, step, {Tensors(step)[0]});
  t.WriteEndMarker();
  LocalFilesEnv env(false);
  std::unique_ptr<Trial> trial = Open(&env, t.root());
  ASSERT_NE(trial, nullptr);
  const std::vector<int64_t> steps = {3, 300, 30};
  constexpr size_t kEach = 7000 * sizeof(float);
  std::vector<std::byte> out(kEach * steps.size());
  const Trial::ValuesTarget target{"a", steps, DType::kFloat32, {7000}, out};
  const int reads_before = env.event_file_reads();
  const std::vector<std::vector<Status>> statuses = trial->CopyValuesFileMajor(std::span(&target, 1), Mode::kGlobal);
  ASSERT_EQ(statuses.size(), 1u);
  for (size_t i = 0; i < steps.size(); ++i) {
    ASSERT_TRUE(statuses[0][i].ok()) << steps[i] << ": " << statuses[0][i].ToString();
    const std::vector<float> expected = Tensors(steps[i])[0].values;
    EXPECT_EQ(std::memcmp(out.data() + i * kEach, expected.data(), kEach), 0) << steps[i];
  }
  EXPECT_EQ(env.event_file_reads() - reads_before, 3) << "one read an event file";
}

}  // namespace
}  // namespace litmus
