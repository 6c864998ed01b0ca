// Trial (trial.h): discovery and refresh over an Env, collections, end-of-training handling, and
// value/reduction/shape reads through the decoded-tensor cache (records decoded in place from
// mapped event files where the Env maps them, RandomAccessFile::Mapped; else read). Bookkeeping
// lives in TrialCatalog. Refresh() mutates; everything else only reads the catalog, and the read
// path's shared state (open and mapped event files, TensorCache) is internally synchronized.
#include "litmus/engine/trial.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <list>
#include <mutex>
#include <unordered_set>
#include <span>
#include <thread>
#include <unordered_map>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_for_each.h>
#include <tbb/task_group.h>

#include "collections_parser.h"
#include "litmus/format/event_codec.h"
#include "litmus/format/crc32c.h"
#include "litmus/format/tfrecord.h"
#include "index_file_view.h"
#include "index_parser.h"
#include "litmus/engine/reductions.h"
#include "python_regex.h"
#include "trial_root.h"
#include "tensor_cache.h"
#include "trial_catalog.h"

namespace litmus {
namespace {

// Upper bound for one framed record: protobuf messages are limited to 2 GiB, plus 16 bytes of
// framing. A larger index length is corruption, not an allocation to attempt.
constexpr uint64_t kMaxRecordLength = (uint64_t{1} << 31) + 16;
// Records at least this large are read shifted so that their data lands aligned (Impl::Read);
// below it, moving the data is cheaper than the bookkeeping.
constexpr size_t kShiftedReadMinBytes = 64 << 10;
// Element sizes are at most 16 bytes (complex128), and new[] storage is 16-byte aligned.
constexpr size_t kMaxAlignment = 16;
// Event files kept open for reads (each is one step of one worker; bound the descriptors).
constexpr size_t kMaxOpenEventFiles = 256;
// Mapped event files (RandomAccessFile::Mapped) kept: many more than open descriptors (a mapping
// needs none), since reading one tensor at every step (Python's values(steps)) visits every
// file of the trial once per tensor. Bounded by count and by mapped bytes: the pages read
// through a mapping count as the process's resident memory (shared, clean file pages that the
// kernel reclaims like any page cache) for as long as it is kept.
constexpr size_t kMaxMappedEventFiles = 4096;
constexpr uint64_t kMaxMappedBytes = uint64_t{2} << 30;
// Smaller event files are read with Read(): for a few kilobytes, a read costs less than mapping
// and unmapping (and the page faults in between).
constexpr uint64_t kMinMappedFileBytes = 64 << 10;
// Records of values wanted only for their reductions (Prefetch's reductions_only) in this range
// are reduced in a reused buffer and not kept: below it a record costs little to keep (and is
// read with its neighbours); above it the buffer that each reading thread keeps would be large
// and no longer fit the CPU caches anyway.
constexpr uint64_t kMinSummarizedRecordBytes = 64 << 10;
constexpr uint64_t kMaxSummarizedRecordBytes = 8 << 20;

std::string StepText(int64_t step, Mode mode) {
  return "step " + std::to_string(step) + " (" + std::string(ModeName(mode)) + ")";
}

// Thread-safe LRU of open event files, so one (step, worker) file is opened once for all of
// its tensors rather than once per read.
class OpenFileCache {
 public:
  explicit OpenFileCache(Env* env) : env_(env) {}

  StatusOr<std::shared_ptr<RandomAccessFile>> Get(const std::string& path) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = map_.find(path); it != map_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second.second);
        return it->second.first;
      }
    }
    // Open outside the lock (may be a network round trip); failures are not cached, since
    // a missing event file may still appear.
    LITMUS_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> opened, env_->NewRandomAccessFile(path));
    std::shared_ptr<RandomAccessFile> file = std::move(opened);
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = map_.find(path); it != map_.end()) return it->second.first;  // lost a race
    lru_.push_front(path);
    map_.emplace(path, std::make_pair(file, lru_.begin()));
    if (map_.size() > kMaxOpenEventFiles) {
      map_.erase(lru_.back());
      lru_.pop_back();
    }
    return file;
  }

 private:
  Env* const env_;
  std::mutex mu_;
  std::list<std::string> lru_;  // most recently used first
  std::unordered_map<std::string, std::pair<std::shared_ptr<RandomAccessFile>, std::list<std::string>::iterator>> map_;
};

// Thread-safe LRU of event files' mappings, and of files not mapped (too small, or the Env
// cannot map them; remembered with their size then, so that a read does not ask again until the
// file has grown). The mappings outlive the open files: a file closed by OpenFileCache stays
// mapped here, and a mapping dropped here stays valid for the tensors that still view it.
// Entries are found by key: the address of the catalog's string naming the event file
// (IndexFileInfo::event_file), which stays put for the trial's life, so that a read looks its file
// up without building and hashing the path (Python's values(steps) reads one record of each
// file per call, hundreds of thousands a second). Every index file has its own string, so one
// event file may have several keys: an entry is one per path, and a key not yet known is added
// to the entry of its path (Insert, FindPath) rather than mapping the file a second time.
class MappingCache {
 public:
  using Key = const void*;
  struct Entry {
    std::optional<FileMapping> mapping;  // nullopt: not mapped
    uint64_t size = 0;                   // of the mapping, or of the file when it was not mapped
  };

  std::optional<Entry> Find(Key key) {
    std::lock_guard<std::mutex> lock(mu_);
    return FindLocked(key);
  }
  // Find() of every key under one lock; out[i] stays nullopt for an unknown or null key.
  // REQUIRES: out.size() == keys.size().
  void FindAll(std::span<const Key> keys, std::span<std::optional<Entry>> out) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] != nullptr) out[i] = FindLocked(keys[i]);
    }
  }
  // The entry of `path` if known (under other keys); `key` becomes one of its keys.
  std::optional<Entry> FindPath(const std::string& path, Key key) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = by_path_.find(path);
    if (it == by_path_.end()) return std::nullopt;
    AddKey(it->second, key);
    Touch(it->second);
    return it->second.entry;
  }
  // Sets the entry of `path`, found under `key` (and the keys it had) from now on.
  void Insert(const std::string& path, Key key, Entry entry) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto [it, inserted] = by_path_.try_emplace(path);
    Node& node = it->second;
    if (inserted) {
      node.path = &it->first;
      lru_.push_front(&node);
      node.lru = lru_.begin();
    } else {
      if (node.entry.mapping) mapped_bytes_ -= node.entry.size;
      Touch(node);
    }
    node.entry = std::move(entry);
    if (node.entry.mapping) mapped_bytes_ += node.entry.size;
    AddKey(node, key);
    while (by_path_.size() > kMaxMappedEventFiles || (mapped_bytes_ > kMaxMappedBytes && by_path_.size() > 1)) {
      Erase(*lru_.back());
    }
  }

 private:
  struct Node {
    Entry entry;
    const std::string* path = nullptr;  // its key in by_path_
    std::vector<Key> keys;              // its keys in by_key_
    std::list<Node*>::iterator lru;
  };
  std::optional<Entry> FindLocked(Key key) {
    const auto it = by_key_.find(key);
    if (it == by_key_.end()) return std::nullopt;
    Touch(*it->second);
    return it->second->entry;
  }
  void Touch(Node& node) { lru_.splice(lru_.begin(), lru_, node.lru); }
  void AddKey(Node& node, Key key) {
    if (by_key_.try_emplace(key, &node).second) node.keys.push_back(key);
  }
  void Erase(Node& node) {
    if (node.entry.mapping) mapped_bytes_ -= node.entry.size;
    for (const Key key : node.keys) by_key_.erase(key);
    lru_.erase(node.lru);
    by_path_.erase(by_path_.find(*node.path));  // (last: it destroys the node and the path)
  }

  std::mutex mu_;
  std::unordered_map<std::string, Node> by_path_;  // (nodes never move)
  std::unordered_map<Key, Node*> by_key_;
  std::list<Node*> lru_;  // most recently used first
  uint64_t mapped_bytes_ = 0;
};

}  // namespace

TrialOptions TrialOptions::FromEnvironment() {
  TrialOptions options;
  if (const char* window = std::getenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW")) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(window, &end, 10);
    if (errno == 0 && end != window && *end == '\0' && v >= 0) options.incomplete_step_wait_window = v;
  }
  if (const char* limit = std::getenv("SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT")) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(limit, &end, 10);
    if (errno == 0 && end != limit && *end == '\0' && v >= 0) options.missing_event_file_retry_limit = v;
  }
  if (const char* delay = std::getenv("SMDEBUG_TRAINING_END_DELAY_REFRESH")) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(delay, &end);
    if (errno == 0 && end != delay && *end == '\0' && v >= 0 && v <= 86400) {
      options.training_end_delay_refresh_s = v;
    }
  }
  return options;
}

struct Trial::Impl {
  Impl(Env* env_in, std::string root_in, TrialOptions options_in)
      : env(env_in),
        root(std::move(root_in)),
        options(options_in),
        cache(options.cache_bytes),
        files(env_in) {}

  Status RefreshOnce();
  Status RefreshCollections();
  Status RefreshIndex();

  // The entry that tensor.value(step, mode, worker) reads, with smdebug's errors (§8.5).
  struct Resolved {
    int64_t global_step;
    const internal::TensorRecord* tensor;
    const internal::CatalogEntry* entry;
  };
  StatusOr<Resolved> Resolve(std::string_view name, int64_t step, Mode mode,
                             const std::optional<std::string>& worker) const;
  // A record of an entry's event file: its raw value or a stored reduction.
  struct Record {
    // The record's key in the tensor cache: the address of the catalog entry (raw value) or of
    // its stored reduction's location, which stay put for the trial's life (catalog entries are
    // never erased; a later index entry for the same tensor, step and worker overwrites it in
    // place, as the key by name, step and worker did).
    TensorCache::Key key;
    uint64_t start_idx;
    uint64_t length;
    std::string_view name;  // the tensor's name in the index, for messages
  };
  // The raw value's record of `entry` (REQUIRES: entry.has_location()), of tensor `name`.
  Record RawRecord(const internal::CatalogEntry& entry, std::string_view name) const {
    return {CacheKey(entry), catalog.files().start(entry), entry.length, name};
  }
  static Record StoredRecord(const IndexEntry& location) {
    return {reinterpret_cast<uintptr_t>(&location), location.start_idx, location.length, location.tensor_name};
  }
  static TensorCache::Key CacheKey(const internal::CatalogEntry& entry) { return reinterpret_cast<uintptr_t>(&entry); }
  // The key of the summary (Tensor::SummaryOf) of the raw value under `key`, in the same cache:
  // keys are addresses, whose top bit is clear in user space.
  static TensorCache::Key SummaryKey(TensorCache::Key key) { return key | (uint64_t{1} << 63); }
  // Whether Prefetch may keep only a summary of `entry`'s raw value (kMinSummarizedRecordBytes).
  static bool Summarizable(const internal::CatalogEntry& entry) {
    return entry.length >= kMinSummarizedRecordBytes && entry.length <= kMaxSummarizedRecordBytes;
  }
  // The memo `reduction_key` of the summary of `entry`'s raw value, if one is cached. (A value
  // that cannot have one costs no cache lookup: reductions of small tensors are asked often.)
  std::optional<double> SummaryMemo(const internal::CatalogEntry& entry, uint32_t reduction_key) const {
    if (!Summarizable(entry)) return std::nullopt;
    const TensorCache::Key key = SummaryKey(CacheKey(entry));
    TensorCache::Presence presence;
    TensorPtr summary;
    cache.PresenceOf(std::span<const TensorCache::Key>(&key, 1), std::span(&presence, 1), std::span(&summary, 1));
    return summary != nullptr ? summary->Memo(reduction_key) : std::nullopt;
  }
  // Reads and decodes `record` of `entry` through the tensor cache.
  StatusOr<TensorPtr> Read(std::string_view name, int64_t global_step, const internal::CatalogEntry& entry,
                           const Record& record) const;
  // A record the index names that the event file does not hold (the file is absent or too
  // short): "not yet" while training runs, for at most options.missing_event_file_retry_limit
  // refreshes; DataLoss after that and once training has ended (docs/trial-format.md).
  Status Missing(std::string_view name, int64_t global_step, const internal::CatalogEntry& entry,
                 const Record& record, const std::string& path, const std::string& what) const;
  // Whether something can still arrive after the end marker: a known step that is not complete
  // across the workers (a worker behind the others), or collections files not all there yet.
  bool SomethingPending() const;

  // A raw value Prefetch() reads: the entry's record, cached under `key`, and the reductions to
  // compute right after decoding it (a set of ReductionKey bits).
  struct Wanted {
    TensorCache::Key key;
    std::string_view name;
    int64_t global_step;
    const internal::CatalogEntry* entry;
    uint64_t start;  // entry's offset (EntryFiles::start)
    uint32_t reductions;
    Prefetched* out;  // what Prefetch tells of the key (its out-parameter), or nullptr
    bool with_value;  // out->value receives the decoded value
    bool statistics = false;  // CollectStatistics asked for this tensor's
    bool summarize = false;   // only a summary is kept (Prefetch's reductions_only; see Summarize)
  };
  // What CollectStatistics asked (statistics_any: anything at all, read without the lock so
  // that a trial nobody asks pays nothing) and what was computed since the last TakeStatistics.
  std::atomic<bool> statistics_any{false};
  mutable std::mutex statistics_mu;
  bool statistics_all = false;
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>()(name); }
  };
  std::unordered_set<std::string, NameHash, std::equal_to<>> statistics_of;
  uint32_t statistics_generation = 1;  // CollectStatistics calls (TensorRecord::statistics_generation)
  mutable std::vector<CollectedStatistics> statistics;
  // Whether Prefetch computes the statistics of `tensor`'s values (statistics_mu held).
  bool StatisticsAsked(const internal::TensorRecord& tensor) const {
    if (statistics_all) return true;
    if (tensor.statistics_generation != statistics_generation) {
      tensor.statistics_asked = statistics_of.find(tensor.name) != statistics_of.end();
      tensor.statistics_generation = statistics_generation;
    }
    return tensor.statistics_asked;
  }
  // Everything to do with a value Prefetch has just decoded, while its data is hot: the
  // reductions asked of its tensor, its statistics, and telling the caller.
  void Decoded(const Wanted& w, const TensorPtr& value) const {
    if (!w.statistics) {
      ComputeReductions(*value, w.reductions);
    } else {
      CollectedStatistics c{std::string(w.name), w.global_step, {}};
      ComputeReductions(*value, w.reductions, &c.statistics);
      std::lock_guard<std::mutex> lock(statistics_mu);
      if (statistics.size() < kMaxCollectedStatistics) statistics.push_back(std::move(c));
    }
    ReportDecoded(w, value);
  }
  // `w` is decoded fine: tells Prefetch's caller.
  static void ReportDecoded(const Wanted& w, const TensorPtr& value) {
    if (w.out == nullptr) return;
    w.out->decoded = true;
    if (w.with_value) w.out->value = value;
  }

  // Computed reductions are memoised on the tensor (Tensor::Memo) under ReductionMemoKey
  // (trial.h). Which ones were asked of each tensor is kept on its catalog record
  // (TensorRecord::reductions_asked, one bit per key): Prefetch computes them as soon as it has
  // decoded a value of that tensor (rules ask for the same reductions at every step), so that a
  // rule finds the result instead of reading the whole tensor again from memory.
  //
  // What a summary made before any reduction of its tensor was asked holds (Prefetch: a rule's
  // first steps, which read a tensor before its reductions are known): the sums, means, L1 norms
  // and the largest |x|, which float32 data gives in one pass (reduction_kernels.h FusedPass).
  // A reduction outside them is answered by reading the value again.
  static constexpr uint32_t kSpeculativeReductions =
      1u << ReductionMemoKey(layout::Reduction::kSum, false) | 1u << ReductionMemoKey(layout::Reduction::kSum, true) |
      1u << ReductionMemoKey(layout::Reduction::kMean, false) | 1u << ReductionMemoKey(layout::Reduction::kMean, true) |
      1u << ReductionMemoKey(layout::Reduction::kL1, false) | 1u << ReductionMemoKey(layout::Reduction::kL1, true) |
      1u << ReductionMemoKey(layout::Reduction::kMax, true);
  StatusOr<double> MemoisedReduction(const Tensor& value, layout::Reduction r, bool abs) const;
  // Computes the reductions in the set `keys` of `value` now, while its data is in the CPU caches,
  // and with `statistics` its ComputeStatistics (in the same pass where reductions.h can).
  void ComputeReductions(const Tensor& value, uint32_t keys, TensorStatistics* statistics = nullptr) const;

  // Where tensor_content started in the last large record read of each tensor (see Read).
  size_t ContentOffsetHint(std::string_view tensor_name) const {
    std::lock_guard<std::mutex> lock(offsets_mu);
    const auto it = content_offsets.find(std::string(tensor_name));
    return it == content_offsets.end() ? 0 : it->second;
  }
  void SetContentOffsetHint(std::string_view tensor_name, size_t offset) const {
    std::lock_guard<std::mutex> lock(offsets_mu);
    content_offsets[std::string(tensor_name)] = offset;
  }
  // How far into its buffer to read a large record of `tensor_name` so that its data lands
  // aligned (by where it started in the tensor's last record; 0 when unknown).
  size_t AligningShift(std::string_view tensor_name) const {
    const size_t hint = ContentOffsetHint(tensor_name);
    return hint == 0 ? 0 : (kMaxAlignment - hint % kMaxAlignment) % kMaxAlignment;
  }
  mutable std::mutex offsets_mu;
  mutable std::unordered_map<std::string, size_t> content_offsets;
  // Reads the records of `wanted` (all in the event file `event_file` names: the catalog's
  // string of one of their entries) in coalesced runs and caches them.
  void PrefetchFile(std::string_view event_file, std::vector<Wanted>& wanted) const;
  // Reads `w`'s record (w.summarize) from `file` (at `path`) into the calling thread's reused
  // buffer, computes the reductions asked of its tensor (and its statistics if collected) there
  // and caches its summary under SummaryKey. Anything that fails is skipped (Value() reads
  // again and reports).
  void Summarize(const std::string& path, const RandomAccessFile& file, const Wanted& w) const;
  mutable std::atomic<uint64_t> summarized{0};  // Summarize calls that kept a summary
  // Reads the records wanted[first, last) with one read spanning them all and caches each one;
  // on any failure it caches nothing (Value() reads them one by one and reports).
  void ReadRun(const std::string& path, const RandomAccessFile& file, std::span<const Wanted> run) const;
  // The mapping of the event file `event_file` names (the catalog's text: an entry's
  // IndexFileInfo::event_file, relative to the root; its address keys MappingCache) if it can be mapped
  // and covers [start, start + length): then records are decoded where they lie. Otherwise (no
  // mapping; a file too short for the record, e.g. still growing or damaged) nullopt, and the
  // caller reads with Read(), which reports a short file as before. Only with
  // options.map_event_files (mapping_enabled()), and not with options.record_buffers: records
  // must then be copied into those buffers (the isolation arena) anyway.
  std::optional<FileMapping> MappingFor(std::string_view event_file, uint64_t start, uint64_t length) const;
  bool mapping_enabled() const { return options.map_event_files && !options.record_buffers; }
  // The key of `entry`'s event file in MappingCache.
  MappingCache::Key MappingKey(const internal::CatalogEntry& entry) const {
    return catalog.files().of(entry).event_file.data();
  }
  // A buffer for `size` bytes of records: options.record_buffers, else the heap.
  std::shared_ptr<std::byte[]> AllocateRecordBuffer(size_t size) const {
    if (options.record_buffers) return options.record_buffers->Allocate(size);
    return std::shared_ptr<std::byte[]>(new std::byte[size]);
  }

  Env* const env;
  const std::string root;
  const TrialOptions options;
  internal::TrialCatalog catalog;
  std::vector<std::string> warnings;
  bool end_marker_seen = false;
  std::chrono::steady_clock::time_point end_marker_seen_at;
  // Refresh() calls so far, and for each event file found missing or short, the count when it
  // first was (Missing's retry budget).
  int64_t refreshes = 0;
  mutable std::mutex missing_mu;
  mutable std::unordered_map<std::string, int64_t> missing_since;

  // Collections: the first file (in sorted order when they first appear) defines the
  // collections and num_workers; every file adds its worker.
  bool collections_ready = false;
  std::set<std::string> collection_files;  // relative to the collections folder
  std::set<std::string> workers;
  std::map<std::string, Collection> collections;
  std::map<std::string, Status> collection_regex_errors;

  // Index discovery. ListFiles(index, cursor) returns only paths after the cursor (the last
  // index file processed), so a refresh costs O(new files). Because zero padding makes the
  // listing order numeric, a straggler worker's file for an old step sorts *before* the cursor
  // and that listing never returns it; smdebug misses such files (§8.2), we follow the [rec]
  // "read every new final index file" by also re-listing the cursor's folder (index/<P9>), from
  // the earliest step that some worker has not written yet, and parsing the files not yet seen
  // there. Only while such a step exists: a worker publishes its steps in order, so once every
  // known step is complete each worker's next file sorts after the cursor, and an idle poll of a
  // complete trial (every single-worker trial) lists only what is new (issue 16: cost per poll
  // independent of the trial's size). Stragglers in folders before the cursor's are missed.
  std::string cursor;         // relative to <root>/index, e.g. "000000000/000000000007_worker_0.json"
  std::string cursor_folder;  // "000000000"
  std::set<std::string> cursor_folder_seen;  // paths (relative to index/) processed in cursor_folder
  // Steps some of the num_workers (> 1) workers have written and others not yet: step -> index
  // files parsed. Bounded by the steps in flight, not by the trial.
  std::map<int64_t, int64_t> incomplete_steps;
  int64_t index_files_parsed = 0;

  mutable TensorCache cache;
  mutable OpenFileCache files;
  mutable MappingCache mappings;

  // TensorNamesInCollection's results, computed when the catalog knew `known_tensors` names.
  struct Members {
    size_t known_tensors = 0;
    std::vector<std::string_view> names;  // views of the catalog's names
  };
  mutable std::mutex members_mu;
  mutable std::map<std::string, Members> collection_members;
  // TensorNamesMatching's compiled patterns and results, the same way: rules ask for the same
  // pattern at every step, and compiling it (PCRE2's JIT) cost more than the rest of the step.
  struct Matching {
    std::shared_ptr<const Regex> regex;
    Members members;
  };
  mutable std::map<std::string, Matching, std::less<>> regex_matches;  // guarded by members_mu
};

Status Trial::Impl::RefreshOnce() {
  LITMUS_RETURN_IF_ERROR(RefreshCollections());
  // smdebug reads collections before any index file (create_trial blocks until they exist);
  // until then the trial shows no steps.
  if (!collections_ready) return OkStatus();
  return RefreshIndex();
}

Status Trial::Impl::RefreshCollections() {
  const std::string dir = Env::JoinPath(root, layout::kCollectionsDir);
  std::vector<FileEntry> listed;
  const Status listed_status = env->ListFiles(dir, "", &listed);
  if (listed_status.code() == StatusCode::kNotFound) return OkStatus();
  LITMUS_RETURN_IF_ERROR(listed_status);
  for (const FileEntry& file : listed) {
    if (collection_files.contains(file.path)) continue;
    const std::string relative = std::string(layout::kCollectionsDir) + "/" + file.path;
    const std::optional<std::string> worker = layout::ParseCollectionsFilePath(relative);
    if (!worker) continue;  // *.tmp and anything else
    const std::string path = Env::JoinPath(root, relative);
    LITMUS_ASSIGN_OR_RETURN(std::string content, env->ReadFileToString(path));
    LITMUS_ASSIGN_OR_RETURN(CollectionsFile parsed, ParseCollectionsJson(content, path));
    if (!collections_ready) {
      collections_ready = true;
      catalog.SetNumWorkers(parsed.num_workers);
      for (const CollectionJson& json : parsed.collections) {
        Status regex_status;
        Collection collection = MakeCollection(json, &regex_status);
        if (!regex_status.ok()) {
          warnings.push_back(path + ": " + regex_status.message());
          collection_regex_errors[json.name] = regex_status;
        }
        collections[json.name] = std::move(collection);
      }
    } else if (parsed.num_workers != catalog.num_workers()) {
      warnings.push_back(path + ": _meta.num_workers " + std::to_string(parsed.num_workers) +
                         " disagrees with " + std::to_string(catalog.num_workers()) +
                         " from the first collections file; using the first");
    }
    workers.insert(*worker);
    collection_files.insert(file.path);
  }
  return OkStatus();
}

Status Trial::Impl::RefreshIndex() {
  const std::string index_dir = Env::JoinPath(root, layout::kIndexDir);
  // (A deque: the names are dropped a chunk at a time once added, see below.)
  std::deque<std::string> candidates;
  if (!cursor_folder.empty() && !incomplete_steps.empty()) {
    // Files of steps before the earliest incomplete one cannot be new: start after them.
    const int64_t earliest = incomplete_steps.begin()->first;
    const std::string earliest_path = layout::IndexFilePath(earliest, "w");  // index/<P9>/<S12>_w.json
    std::string from;  // <S12>, which sorts before every <S12>_<worker>.json
    if (earliest_path.starts_with(std::string(layout::kIndexDir) + "/" + cursor_folder + "/")) {
      from = earliest_path.substr(earliest_path.rfind('/') + 1, 12);
    }
    std::vector<FileEntry> folder;
    const Status s = env->ListFiles(Env::JoinPath(index_dir, cursor_folder), from, &folder);
    if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
    for (const FileEntry& file : folder) {
      std::string relative = cursor_folder + "/" + file.path;
      if (relative <= cursor && !cursor_folder_seen.contains(relative)) {
        candidates.push_back(std::move(relative));
      }
    }
  }
  std::vector<FileEntry> fresh;
  const Status s = env->ListFiles(index_dir, cursor, &fresh);
  if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
  for (FileEntry& file : fresh) candidates.push_back(std::move(file.path));
  // (Freed now, and the candidates a chunk at a time once added: a trial opened late lists every
  // index file at once, and the list would otherwise add to the peak while the catalog grows.)
  std::vector<FileEntry>().swap(fresh);
  const size_t total = candidates.size();
  size_t dropped = 0;  // candidates popped from the front: candidate i is candidates[i - dropped]

  // Candidates are in path order (stragglers sort before the cursor, fresh files after it),
  // which is the order smdebug processes files in, so first-seen-wins maps agree with it. They
  // are read and parsed in parallel, a chunk at a time (a trial opened late has thousands), and
  // added to the catalog in that order; the next chunk is parsed while this one is added.
  // (Two chunks' texts are held at once, the parsed views point into them: 64 files a chunk
  // keep that small. 256 held ~4 MB more at the peak of `litmus inspect` on 1000-step folders of
  // 100 tensors, and opened the 2000-step small trial no faster: 27.0 / 28.6 ms against 25.4 /
  // 25.5 ms.)
  constexpr size_t kChunk = 64;
  struct Chunk {
    size_t first = 0;
    std::vector<std::optional<layout::IndexFileName>> names;
    std::vector<std::optional<StatusOr<IndexFileView>>> parsed;
  };
  const auto parse = [&](size_t first) {
    Chunk chunk;
    chunk.first = first;
    const size_t count = std::min(kChunk, total - first);
    chunk.names.resize(count);
    chunk.parsed.resize(count);
    tbb::parallel_for(size_t{0}, count, [&](size_t i) {
      const std::string& relative = candidates[first + i - dropped];
      chunk.names[i] = layout::ParseIndexFilePath(std::string(layout::kIndexDir) + "/" + relative);
      const std::optional<layout::IndexFileName>& name = chunk.names[i];
      if (!name || name->step < options.range_begin || name->step >= options.range_end) return;
      const std::string path = Env::JoinPath(index_dir, relative);
      StatusOr<std::string> content = env->ReadFileToString(path);
      chunk.parsed[i] =
          content.ok() ? ParseIndexFileView(*std::move(content), path) : StatusOr<IndexFileView>(content.status());
    });
    return chunk;
  };
  // Adds a parsed chunk in order; stops at the first file that failed (the files before it stay).
  bool parsed_any = false;
  const auto add = [&](Chunk& chunk) -> Status {
    for (size_t i = 0; i < chunk.names.size(); ++i) {
      const std::string& relative = candidates[chunk.first + i - dropped];
      if (!chunk.names[i]) continue;  // *.json.tmp, *.csv, stray files: ignored (and listed again; cheap)
      if (chunk.parsed[i]) {
        if (!chunk.parsed[i]->ok()) return chunk.parsed[i]->status();
        catalog.set_files_ahead(total - (chunk.first + i) - 1);
        catalog.AddIndexFile(chunk.names[i]->step, chunk.names[i]->worker, **chunk.parsed[i], &warnings);
        ++index_files_parsed;
        parsed_any = true;
        if (catalog.num_workers() > 1) {
          const auto it = incomplete_steps.try_emplace(chunk.names[i]->step, 0).first;
          if (++it->second >= catalog.num_workers()) incomplete_steps.erase(it);
        }
      }
      const std::string folder = relative.substr(0, relative.find('/'));
      if (folder != cursor_folder && relative > cursor) {
        cursor_folder = folder;
        cursor_folder_seen.clear();
      }
      if (folder == cursor_folder) cursor_folder_seen.insert(relative);
      if (relative > cursor) cursor = relative;
    }
    return OkStatus();
  };
  if (!candidates.empty()) {
    Chunk current = parse(0);
    while (true) {
      const size_t next_first = current.first + kChunk;
      Chunk next;
      tbb::task_group parsing;
      if (next_first < total) parsing.run([&] { next = parse(next_first); });
      const Status added = add(current);
      parsing.wait();  // (also before returning an error: the task uses this frame)
      if (!added.ok()) return added;
      if (next_first >= total) break;
      // (After the parse task: it reads the deque.)
      for (; dropped < next_first; ++dropped) candidates.pop_front();
      current = std::move(next);
    }
  }
  if (parsed_any) catalog.ApplyWaitWindow(options.incomplete_step_wait_window);
  return OkStatus();
}

StatusOr<Trial::Impl::Resolved> Trial::Impl::Resolve(std::string_view name, int64_t step, Mode mode,
                                                     const std::optional<std::string>& worker) const {
  const internal::TensorRecord* tensor = catalog.FindTensor(name);
  if (tensor == nullptr) {
    return TrialErrorStatus(TrialError::kTensorUnavailable,
                            "tensor '" + std::string(name) + "' was never saved in trial " + root);
  }
  const std::optional<internal::TrialCatalog::ResolvedStep> global = catalog.ResolveTensorStep(*tensor, step, mode);
  if (!global) {
    const std::string where = "tensor '" + std::string(name) + "' at " + StepText(step, mode);
    switch (catalog.StepAvailability(step, mode)) {
      case StepState::kAvailable:
        return TrialErrorStatus(TrialError::kTensorUnavailableForStep, where + ": not saved at this step");
      case StepState::kNotYetAvailable:
        return TrialErrorStatus(TrialError::kStepNotYetAvailable, where + ": step not yet available");
      case StepState::kUnavailable:
        return TrialErrorStatus(TrialError::kStepUnavailable, where + ": step was not saved");
      case StepState::kNoMoreData:
        return TrialErrorStatus(TrialError::kNoMoreData, where + ": training ended before this step");
    }
  }
  const internal::StepEntryList& by_worker = global->entries;
  if (worker) {
    const internal::CatalogEntry* entry = by_worker.Find(*worker, catalog.files());
    if (entry == nullptr) {
      return TrialErrorStatus(TrialError::kInvalidWorker, "tensor '" + std::string(name) + "' at " +
                                                              StepText(step, mode) + ": worker '" +
                                                              *worker + "' did not write this step");
    }
    return Resolved{global->global_step, tensor, entry};
  }
  // Default worker: the lexicographically smallest one that wrote the step.
  return Resolved{global->global_step, tensor, &by_worker.front()};
}

Status Trial::Impl::Missing(std::string_view name, int64_t global_step, const internal::CatalogEntry& entry,
                            const Record& record, const std::string& path, const std::string& what) const {
  // smdebug publishes an event file before the index that names it (local rename order, S3
  // upload order), so a record the index names and the file does not hold is damage, unless an
  // asynchronous upload is still on its way: wait for it while training runs, within smdebug's
  // retry budget, and never read it as "not saved".
  const auto damaged = [&](const std::string& why) {
    return DataLossError("damaged trial: " + what + " (tensor '" + std::string(name) + "', step " +
                         std::to_string(global_step) + ", worker '" + catalog.files().worker(entry) + "', record at offset " +
                         std::to_string(record.start_idx) + ", " + std::to_string(record.length) + " bytes" + why + ")");
  };
  if (end_marker_seen) return damaged("; training has ended");
  int64_t waited = 0;
  {
    std::lock_guard<std::mutex> lock(missing_mu);
    const auto [it, inserted] = missing_since.try_emplace(path, refreshes);
    waited = refreshes - it->second;
  }
  if (waited >= options.missing_event_file_retry_limit) {
    return damaged("; still missing after " + std::to_string(waited) + " polls (SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT)");
  }
  return TrialErrorStatus(TrialError::kStepNotYetAvailable,
                          "tensor '" + std::string(name) + "' at step " + std::to_string(global_step) + ": " + what +
                              " (waiting for it)");
}

bool Trial::Impl::SomethingPending() const {
  if (!collections_ready || static_cast<int64_t>(workers.size()) < catalog.num_workers()) return true;
  const std::optional<int64_t> last = catalog.LastKnownStep();
  return last && *last > catalog.last_complete_step();
}

std::optional<FileMapping> Trial::Impl::MappingFor(std::string_view event_file, uint64_t start,
                                                   uint64_t length) const {
  if (!mapping_enabled()) return std::nullopt;
  const auto covers = [&](uint64_t size) { return start <= size && length <= size - start; };
  std::optional<MappingCache::Entry> known = mappings.Find(event_file.data());
  if (known && covers(known->size)) return known->mapping;
  const std::string path = Env::JoinPath(root, event_file);
  if (!known) {
    // (Known under another index file's string of the same path?)
    known = mappings.FindPath(path, event_file.data());
    if (known && covers(known->size)) return known->mapping;
  }
  // Unknown, or the record lies beyond what was known of the file: look at the file as it is now.
  StatusOr<std::shared_ptr<RandomAccessFile>> file = files.Get(path);
  if (!file.ok()) return std::nullopt;
  const StatusOr<uint64_t> size = (*file)->Size();
  if (!size.ok()) return std::nullopt;
  MappingCache::Entry entry{std::nullopt, *size};
  if (*size >= kMinMappedFileBytes) {
    entry.mapping = (*file)->Mapped();
    if (entry.mapping) entry.size = entry.mapping->bytes.size();
  }
  mappings.Insert(path, event_file.data(), entry);
  if (!covers(entry.size)) return std::nullopt;
  return entry.mapping;
}

StatusOr<TensorPtr> Trial::Impl::Read(std::string_view name, int64_t global_step,
                                      const internal::CatalogEntry& entry, const Record& location) const {
  return cache.GetOrLoad(location.key, [&]() -> StatusOr<TensorPtr> {
    const std::string path = Env::JoinPath(root, catalog.files().of(entry).event_file);
    if (location.length > kMaxRecordLength) {
      return DataLossError(path + ": index length " + std::to_string(location.length) + " of '" +
                           std::string(location.name) + "' at offset " + std::to_string(location.start_idx) +
                           " exceeds the largest possible record");
    }
    if (const std::optional<FileMapping> mapped = MappingFor(catalog.files().of(entry).event_file, location.start_idx, location.length)) {
      const std::span<const std::byte> record =
          mapped->bytes.subspan(static_cast<size_t>(location.start_idx), static_cast<size_t>(location.length));
      return DecodeMappedTensorRecord(mapped->owner, record, path, location.start_idx, location.name);
    }
    StatusOr<std::shared_ptr<RandomAccessFile>> file = files.Get(path);
    if (!file.ok()) {
      if (file.status().code() == StatusCode::kNotFound) {
        return Missing(name, global_step, entry, location, path, path + " does not exist");
      }
      return file.status();
    }
    // A large record is read `shift` bytes into its buffer so that its data lands aligned (no
    // move after decoding), using where the data started in the last record of this tensor; the
    // offset changes rarely (with the length of the step number), and a wrong guess only costs
    // the move.
    const size_t length = static_cast<size_t>(location.length);
    const size_t shift = length >= kShiftedReadMinBytes ? AligningShift(location.name) : 0;
    std::shared_ptr<std::byte[]> buffer = AllocateRecordBuffer(length + shift);
    const std::span<std::byte> record(buffer.get() + shift, length);
    LITMUS_ASSIGN_OR_RETURN(size_t read, (*file)->Read(location.start_idx, record));
    if (read < location.length) {
      return Missing(name, global_step, entry, location, path,
                     path + " holds only " + std::to_string(location.start_idx + read) +
                         " bytes, the index needs " + std::to_string(location.start_idx + location.length));
    }
    size_t content_offset = 0;
    StatusOr<TensorPtr> decoded = DecodeTensorRecord(std::move(buffer), record, path, location.start_idx,
                                                     location.name, nullptr, &content_offset);
    if (decoded.ok() && length >= kShiftedReadMinBytes) SetContentOffsetHint(location.name, content_offset);
    return decoded;
  });
}

StatusOr<double> Trial::Impl::MemoisedReduction(const Tensor& value, layout::Reduction r, bool abs) const {
  const uint32_t key = ReductionMemoKey(r, abs);
  if (const std::optional<double> memo = value.Memo(key)) return *memo;
  StatusOr<double> computed = ComputeReduction(value, r, abs);
  if (computed.ok()) value.SetMemo(key, *computed);
  return computed;
}

void Trial::Impl::ComputeReductions(const Tensor& value, uint32_t keys, TensorStatistics* statistics) const {
  // Together, so that the reductions that can share a pass over the data do (reductions.h).
  // (Fixed arrays: this runs for every tensor a prefetch decodes.)
  std::array<ReductionRequest, 32> requests;
  std::array<uint32_t, 32> request_keys;
  size_t count = 0;
  for (uint32_t key = 0; key < 32 && keys >> key != 0; ++key) {
    if ((keys >> key & 1) == 0 || value.Memo(key)) continue;
    requests[count] = {static_cast<layout::Reduction>(key / 2), (key & 1) != 0};
    request_keys[count++] = key;
  }
  if (count == 0) {
    if (statistics != nullptr) *statistics = ComputeStatistics(value);
    return;
  }
  std::array<double, 32> computed;
  std::array<bool, 32> ok;
  litmus::ComputeReductionsInto(value, std::span<const ReductionRequest>(requests.data(), count), computed, ok, statistics);
  for (size_t i = 0; i < count; ++i) {
    if (ok[i]) value.SetMemo(request_keys[i], computed[i]);
  }
}

void Trial::Impl::PrefetchFile(std::string_view event_file, std::vector<Wanted>& wanted) const {
  const auto read_alone = [this](const Wanted& w) {
    const StatusOr<TensorPtr> value = Read(w.name, w.global_step, *w.entry, RawRecord(*w.entry, w.name));
    if (!value.ok()) return;
    Decoded(w, *value);
  };
  const std::string path = Env::JoinPath(root, event_file);
  // Values wanted for their reductions only, in records that the file reads alone anyway (S3
  // fetches many records with one request: those keep their data).
  if (std::any_of(wanted.begin(), wanted.end(), [](const Wanted& w) { return w.summarize; })) {
    StatusOr<std::shared_ptr<RandomAccessFile>> file = files.Get(path);
    const uint64_t read_alone_above = file.ok() ? (*file)->coalescing().max_record_bytes : UINT64_MAX;
    const auto kept = std::partition(wanted.begin(), wanted.end(), [&](const Wanted& w) {
      return !w.summarize || w.entry->length <= read_alone_above;
    });
    const size_t first = static_cast<size_t>(kept - wanted.begin());
    tbb::parallel_for(first, wanted.size(), [&](size_t i) { Summarize(path, **file, wanted[i]); });
    wanted.resize(first);
    if (wanted.empty()) return;
  }
  if (wanted.size() == 1) {
    read_alone(wanted.front());
    return;
  }
  // A mapped file: every record is decoded where it lies, in parallel; nothing to coalesce.
  uint64_t first_start = UINT64_MAX;
  uint64_t last_end = 0;
  for (const Wanted& w : wanted) {
    first_start = std::min(first_start, w.start);
    last_end = std::max(last_end, w.start + std::min<uint64_t>(w.entry->length, kMaxRecordLength));
  }
  if (const std::optional<FileMapping> mapped = MappingFor(event_file, first_start, last_end - first_start)) {
    const uint64_t size = mapped->bytes.size();
    tbb::parallel_for(tbb::blocked_range<size_t>(0, wanted.size()), [&](const tbb::blocked_range<size_t>& range) {
      std::vector<std::pair<TensorCache::Key, TensorPtr>> decoded;
      decoded.reserve(range.size());
      for (size_t i = range.begin(); i != range.end(); ++i) {
        const Wanted& w = wanted[i];
        const internal::CatalogEntry& entry = *w.entry;
        if (entry.length > kMaxRecordLength || w.start > size || entry.length > size - w.start) {
          read_alone(w);  // (reports through the ordinary path)
          continue;
        }
        const std::span<const std::byte> record =
            mapped->bytes.subspan(static_cast<size_t>(w.start), static_cast<size_t>(entry.length));
        StatusOr<TensorPtr> tensor = DecodeMappedTensorRecord(mapped->owner, record, path, w.start, w.name);
        if (!tensor.ok()) continue;  // (Value() reads it again and reports)
        Decoded(w, *tensor);
        decoded.emplace_back(w.key, *std::move(tensor));
      }
      cache.InsertAll(decoded);
    });
    return;
  }
  StatusOr<std::shared_ptr<RandomAccessFile>> file = files.Get(path);
  if (!file.ok()) {
    for (const Wanted& w : wanted) read_alone(w);
    return;
  }
  const RandomAccessFile::Coalescing limits = (*file)->coalescing();
  std::sort(wanted.begin(), wanted.end(), [](const Wanted& a, const Wanted& b) {
    return a.start < b.start;
  });
  // Runs of records that are small enough, close enough and fit one read; a run of one record
  // takes the ordinary path (which also reads large records alone).
  std::vector<std::span<const Wanted>> runs;
  size_t first = 0;
  for (size_t i = 1; i <= wanted.size(); ++i) {
    bool extend = false;
    if (i < wanted.size()) {
      const internal::CatalogEntry& prev = *wanted[i - 1].entry;
      const internal::CatalogEntry& next = *wanted[i].entry;
      const uint64_t prev_start = wanted[i - 1].start;
      const uint64_t next_start = wanted[i].start;
      const uint64_t run_begin = wanted[first].start;
      const uint64_t prev_end = prev_start + prev.length;
      extend = prev.length <= limits.max_record_bytes && next.length <= limits.max_record_bytes &&
               next.length <= kMaxRecordLength && next_start >= prev_end &&
               next_start - prev_end <= limits.max_gap_bytes &&
               next_start + next.length - run_begin <= limits.max_read_bytes;
    }
    if (extend) continue;
    runs.emplace_back(wanted.data() + first, i - first);
    first = i;
  }
  tbb::parallel_for_each(runs.begin(), runs.end(), [&](std::span<const Wanted> run) {
    if (run.size() == 1) {
      read_alone(run.front());
    } else {
      ReadRun(path, **file, run);
    }
  });
}

void Trial::Impl::ReadRun(const std::string& path, const RandomAccessFile& file, std::span<const Wanted> run) const {
  const uint64_t begin = run.front().start;
  const uint64_t end = run.back().start + run.back().entry->length;
  const size_t size = static_cast<size_t>(end - begin);
  std::shared_ptr<std::byte[]> buffer = AllocateRecordBuffer(size);
  const StatusOr<size_t> read = file.Read(begin, std::span<std::byte>(buffer.get(), size));
  if (!read.ok() || *read < size) return;
  std::vector<std::pair<TensorCache::Key, TensorPtr>> decoded;
  decoded.reserve(run.size());
  for (const Wanted& w : run) {
    const internal::CatalogEntry& entry = *w.entry;
    const std::span<std::byte> record(buffer.get() + (w.start - begin), static_cast<size_t>(entry.length));
    StatusOr<TensorPtr> tensor = DecodeTensorRecord(buffer, record, path, w.start, w.name);
    if (!tensor.ok()) continue;
    Decoded(w, *tensor);
    decoded.emplace_back(w.key, *std::move(tensor));
  }
  cache.InsertAll(decoded);
}

void Trial::Impl::Summarize(const std::string& path, const RandomAccessFile& file, const Wanted& w) const {
  // The record lands where its data is aligned (as in Read), so decoding moves nothing.
  const size_t length = static_cast<size_t>(w.entry->length);
  const size_t shift = AligningShift(w.name);
  thread_local std::unique_ptr<std::byte[]> buffer;
  thread_local size_t capacity = 0;
  if (capacity < length + shift) {
    capacity = std::max<size_t>(length + shift, kMinSummarizedRecordBytes * 4);
    buffer.reset(new std::byte[capacity]);
  }
  const std::span<std::byte> record(buffer.get() + shift, length);
  const StatusOr<size_t> read = file.Read(w.start, record);
  if (!read.ok() || *read < length) return;
  size_t content_offset = 0;
  // (The buffer outlives the decoded value, which does not leave this function: no owner.)
  const StatusOr<TensorPtr> decoded = DecodeTensorRecord(std::shared_ptr<std::byte[]>(std::shared_ptr<void>(), buffer.get()),
                                                         record, path, w.start, w.name, nullptr, &content_offset);
  if (!decoded.ok() || (*decoded)->is_string()) return;
  SetContentOffsetHint(w.name, content_offset);
  Wanted reduced = w;
  reduced.out = nullptr;
  Decoded(reduced, *decoded);
  TensorPtr summary = Tensor::SummaryOf(**decoded);
  ReportDecoded(w, summary);
  cache.Insert(SummaryKey(w.key), std::move(summary));
  summarized.fetch_add(1, std::memory_order_relaxed);
}

uint64_t Trial::values_summarized() const { return impl_->summarized.load(std::memory_order_relaxed); }

Trial::Trial(std::unique_ptr<Impl> impl, std::string root) : impl_(std::move(impl)), root_(std::move(root)) {}
Trial::~Trial() = default;

StatusOr<std::unique_ptr<Trial>> Trial::Open(Env* env, std::string root, TrialOptions options) {
  LITMUS_ASSIGN_OR_RETURN(root, internal::CheckedTrialRoot(env, std::move(root)));
  auto impl = std::make_unique<Impl>(env, root, options);
  std::unique_ptr<Trial> trial(new Trial(std::move(impl), std::move(root)));
  LITMUS_RETURN_IF_ERROR(trial->Refresh());
  return trial;
}

Status Trial::Refresh() {
  Impl& impl = *impl_;
  // After the final refresh smdebug never lists again; neither do we (queries stay stable).
  if (impl.catalog.loaded_all_steps()) return OkStatus();
  // §8.4: the marker is checked *before* listing, so every file final before it appeared is seen.
  LITMUS_ASSIGN_OR_RETURN(bool ended,
                          impl.env->FileExists(Env::JoinPath(impl.root, layout::kEndOfJobFile)));
  ++impl.refreshes;
  LITMUS_RETURN_IF_ERROR(impl.RefreshOnce());
  if (!ended) return OkStatus();
  // What was final before the marker appeared has just been listed. smdebug then sleeps
  // SMDEBUG_TRAINING_END_DELAY_REFRESH and lists once more; we wait only while something can
  // still arrive (a step incomplete across the workers, a worker's collections file), with that
  // delay as the upper bound, and without blocking: the caller's next Refresh lists again.
  const auto now = std::chrono::steady_clock::now();
  if (!impl.end_marker_seen) {
    impl.end_marker_seen = true;
    impl.end_marker_seen_at = now;
  }
  const bool expired = now - impl.end_marker_seen_at >=
                       std::chrono::duration<double>(impl.options.training_end_delay_refresh_s);
  if (impl.SomethingPending() && !expired) return OkStatus();
  if (!impl.collections_ready) {
    impl.warnings.push_back(impl.root + ": training ended but no collections file exists");
  }
  impl.catalog.MarkAllStepsLoaded();
  return OkStatus();
}

bool Trial::collections_ready() const { return impl_->collections_ready; }
int64_t Trial::num_workers() const { return impl_->catalog.num_workers(); }
std::vector<std::string> Trial::workers() const { return {impl_->workers.begin(), impl_->workers.end()}; }
bool Trial::end_marker_seen() const { return impl_->end_marker_seen; }
bool Trial::loaded_all_steps() const { return impl_->catalog.loaded_all_steps(); }
int64_t Trial::last_complete_step() const { return impl_->catalog.last_complete_step(); }
std::vector<std::string> Trial::warnings() const { return impl_->warnings; }
int64_t Trial::index_files_parsed() const { return impl_->index_files_parsed; }

std::optional<int64_t> Trial::FirstStepAtOrAfter(int64_t step) const {
  return impl_->catalog.FirstStepAtOrAfter(step);
}

std::vector<int64_t> Trial::Steps(Mode mode, bool include_incomplete) const {
  return impl_->catalog.Steps(mode, include_incomplete);
}
bool Trial::HasMode(Mode mode) const { return impl_->catalog.HasMode(mode); }
std::optional<int64_t> Trial::GlobalStep(Mode mode, int64_t mode_step) const {
  return impl_->catalog.GlobalStep(mode, mode_step);
}
std::optional<std::pair<Mode, int64_t>> Trial::ModeOfGlobalStep(int64_t global_step) const {
  return impl_->catalog.ModeOfGlobalStep(global_step);
}
std::vector<std::string> Trial::WorkersForStep(int64_t global_step) const {
  return impl_->catalog.WorkersForStep(global_step);
}
bool Trial::IsStepComplete(int64_t global_step) const { return impl_->catalog.IsStepComplete(global_step); }
StepState Trial::StepAvailability(int64_t step, Mode mode) const {
  return impl_->catalog.StepAvailability(step, mode);
}

std::vector<std::string> Trial::TensorNames() const { return impl_->catalog.TensorNames(); }
std::vector<std::string> Trial::TensorNamesAtStep(int64_t global_step) const {
  return impl_->catalog.TensorNamesAtStep(global_step);
}
std::vector<std::string_view> Trial::TensorNameViewsAtStep(int64_t global_step,
                                                           const std::vector<std::string_view>* among) const {
  return impl_->catalog.TensorNameViewsAtStep(global_step, among);
}
std::vector<std::string> Trial::TensorNamesForMode(Mode mode) const {
  return impl_->catalog.TensorNamesForMode(mode);
}
std::vector<std::string_view> Trial::TensorNameViewsForMode(Mode mode) const {
  return impl_->catalog.TensorNameViewsForMode(mode);
}

StatusOr<std::vector<std::string>> Trial::TensorNamesInCollection(const std::string& collection) const {
  LITMUS_ASSIGN_OR_RETURN(std::vector<std::string_view> views, TensorNameViewsInCollection(collection));
  return std::vector<std::string>(views.begin(), views.end());
}

StatusOr<std::vector<std::string_view>> Trial::TensorNameViewsInCollection(const std::string& collection) const {
  const auto it = impl_->collections.find(collection);
  if (it == impl_->collections.end()) {
    return NotFoundError("no collection '" + collection + "' in trial " + impl_->root);
  }
  if (const auto error = impl_->collection_regex_errors.find(collection);
      error != impl_->collection_regex_errors.end()) {
    return error->second;
  }
  // Rules ask for the same collection at every step: the members are computed again only when
  // new tensor names appeared (names are never removed, so their count tells).
  const size_t known = impl_->catalog.tensors().size();
  std::lock_guard<std::mutex> lock(impl_->members_mu);
  Impl::Members& members = impl_->collection_members[collection];
  if (members.known_tensors == known && known > 0) return members.names;
  const Collection& c = it->second;
  const std::set<std::string> listed(c.tensor_names.begin(), c.tensor_names.end());
  std::vector<std::string_view> out;
  for (const auto& [name, unused] : impl_->catalog.tensors()) {
    bool member = listed.contains(name);
    for (size_t i = 0; !member && i < c.compiled_regex.size(); ++i) member = c.compiled_regex[i]->Search(name);
    if (member) out.push_back(name);
  }
  members = {known, out};
  return out;
}

StatusOr<std::vector<std::string>> Trial::TensorNamesMatching(const std::string& pattern) const {
  LITMUS_ASSIGN_OR_RETURN(std::vector<std::string_view> views, TensorNameViewsMatching(pattern));
  return std::vector<std::string>(views.begin(), views.end());
}

StatusOr<std::vector<std::string_view>> Trial::TensorNameViewsMatching(const std::string& pattern) const {
  const size_t known = impl_->catalog.tensors().size();
  std::lock_guard<std::mutex> lock(impl_->members_mu);
  auto it = impl_->regex_matches.find(pattern);
  if (it == impl_->regex_matches.end()) {
    // (A bad pattern is not remembered: it is compiled again, and refused again, at each call.)
    LITMUS_ASSIGN_OR_RETURN(std::shared_ptr<const Regex> regex, Regex::Compile(pattern));
    it = impl_->regex_matches.emplace(pattern, Impl::Matching{std::move(regex), {}}).first;
  }
  Impl::Matching& matching = it->second;
  if (matching.members.known_tensors == known && known > 0) return matching.members.names;
  std::vector<std::string_view> out;
  for (const auto& [name, unused] : impl_->catalog.tensors()) {
    if (matching.regex->Search(name)) out.push_back(name);
  }
  matching.members = {known, out};
  return out;
}

const std::map<std::string, Collection>& Trial::collections() const { return impl_->collections; }
bool Trial::HasTensor(const std::string& name) const { return impl_->catalog.FindTensor(name) != nullptr; }
std::optional<std::string_view> Trial::SavedTensorName(std::string_view name, bool rule_read) const {
  const internal::TensorRecord* tensor = impl_->catalog.FindTensor(name);
  if (tensor == nullptr) return std::nullopt;
  if (rule_read) tensor->NoteRawRead();
  return tensor->name;
}

std::optional<int64_t> Trial::TensorStepPosition(std::string_view name, int64_t step) const {
  const internal::TensorRecord* tensor = impl_->catalog.FindTensor(name);
  if (tensor == nullptr) return std::nullopt;
  const std::optional<size_t> at = impl_->catalog.StepPosition(*tensor, step);
  return at ? std::optional<int64_t>(static_cast<int64_t>(*at)) : std::nullopt;
}

std::vector<int64_t> Trial::TensorSteps(const std::string& name, bool include_incomplete) const {
  return impl_->catalog.TensorSteps(name, include_incomplete);
}
std::vector<int64_t> Trial::TensorSteps(const std::string& name, Mode mode, bool include_incomplete) const {
  return impl_->catalog.TensorModeSteps(name, mode, include_incomplete);
}

std::vector<TensorEntry> Trial::Entries(const std::string& name, int64_t global_step) const {
  std::vector<TensorEntry> out;
  const internal::TensorRecord* tensor = impl_->catalog.FindTensor(name);
  if (tensor == nullptr) return out;
  const internal::StepEntryList entries = impl_->catalog.StepEntries(*tensor, global_step);
  for (size_t i = 0; i < entries.size(); ++i) {
    out.push_back(impl_->catalog.files().ToTensorEntry(entries[i], tensor->name));
  }
  return out;
}

StatusOr<TensorPtr> Trial::Value(std::string_view name, int64_t step, Mode mode,
                                 const std::optional<std::string>& worker, bool rule_read) const {
  LITMUS_ASSIGN_OR_RETURN(Impl::Resolved resolved, impl_->Resolve(name, step, mode, worker));
  if (rule_read) resolved.tensor->NoteRawRead();
  const internal::CatalogEntry& entry = *resolved.entry;
  if (!entry.has_location()) {
    return TrialErrorStatus(TrialError::kTensorUnavailableForStep,
                            "tensor '" + std::string(name) + "' at " + StepText(step, mode) + ": no raw value saved" +
                                (impl_->catalog.files().has_stored_reductions(entry) ? " (only reductions)" : ""));
  }
  return impl_->Read(name, resolved.global_step, entry, impl_->RawRecord(entry, name));
}

void Trial::Prefetch(const std::vector<StepTensor>& keys, std::vector<Prefetched>* out, bool with_values,
                     std::span<const uint8_t> reductions_only) const {
  if (out != nullptr) out->assign(keys.size(), Prefetched());
  std::vector<Impl::Wanted> wanted;
  std::vector<TensorCache::Key> cache_keys;
  std::unique_lock<std::mutex> statistics_lock(impl_->statistics_mu, std::defer_lock);
  if (impl_->statistics_any.load(std::memory_order_relaxed)) statistics_lock.lock();
  wanted.reserve(keys.size());
  cache_keys.reserve(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) {
    const auto& [name, step] = keys[k];
    StatusOr<Impl::Resolved> resolved = impl_->Resolve(name, step, Mode::kGlobal, std::nullopt);
    if (!resolved.ok() || !resolved->entry->has_location()) continue;
    const internal::CatalogEntry& entry = *resolved->entry;
    const TensorCache::Key key = Impl::CacheKey(entry);
    if (out != nullptr) (*out)[k].stored_reductions = impl_->catalog.files().has_stored_reductions(entry);
    const uint32_t asked = resolved->tensor->reductions_asked.load(std::memory_order_relaxed);
    const bool summarize = k < reductions_only.size() && reductions_only[k] != 0 && Impl::Summarizable(entry) &&
                           !resolved->tensor->raw_read.load(std::memory_order_relaxed);
    // (Before any reduction of the tensor was asked, a rule's first steps, a summary holds those
    // that one pass gives.)
    const uint32_t reductions = summarize && asked == 0 ? Impl::kSpeculativeReductions : asked;
    wanted.push_back({key, name, resolved->global_step, &entry, impl_->catalog.files().start(entry), reductions,
                      out != nullptr ? out->data() + k : nullptr, with_values,
                      statistics_lock.owns_lock() && impl_->StatisticsAsked(*resolved->tensor), summarize});
    cache_keys.push_back(key);
    // (A summary will do too; a cached raw value is found first.)
    if (summarize) cache_keys.push_back(Impl::SummaryKey(key));
  }
  if (statistics_lock.owns_lock()) statistics_lock.unlock();
  std::vector<TensorCache::Presence> presence(cache_keys.size());
  std::vector<TensorPtr> cached(out != nullptr && with_values ? cache_keys.size() : 0);
  impl_->cache.PresenceOf(cache_keys, presence, cached);
  // Grouped by event file (usually one or a few per call, so the last group is checked first).
  // (Each group keeps the catalog's text of its first entry, whose address keys the mappings.)
  std::vector<std::pair<std::string_view, std::vector<Impl::Wanted>>> by_file;
  std::unordered_map<std::string_view, size_t> group_of;
  size_t group = SIZE_MAX;  // of the previous key
  for (size_t i = 0, c = 0; i < wanted.size(); c += wanted[i].summarize ? 2 : 1, ++i) {
    // (c: the first of wanted[i]'s keys in cache_keys.)
    size_t present = c;
    if (presence[c] == TensorCache::Presence::kAbsent && wanted[i].summarize) present = c + 1;
    if (presence[present] != TensorCache::Presence::kAbsent) {
      // (A load in progress elsewhere may still fail: only a cached value counts as decoded.)
      if (wanted[i].out != nullptr && presence[present] == TensorCache::Presence::kCached) {
        wanted[i].out->decoded = true;
        if (with_values) wanted[i].out->value = std::move(cached[present]);
      }
      continue;
    }
    const std::string_view file = impl_->catalog.files().of(*wanted[i].entry).event_file;  // (views the catalog's text)
    if (group == SIZE_MAX || by_file[group].first != file) {
      const auto [it, inserted] = group_of.try_emplace(file, by_file.size());
      if (inserted) by_file.emplace_back(file, std::vector<Impl::Wanted>());
      group = it->second;
    }
    by_file[group].second.push_back(wanted[i]);
  }
  tbb::parallel_for_each(by_file.begin(), by_file.end(),
                         [this](auto& file) { impl_->PrefetchFile(file.first, file.second); });
}

namespace {

// The content of `record` (one whole framed record, at `offset` of its file) copied to `out`, if
// it is a tensor_content record of `dtype` and `shape` with out.size() bytes of content, its
// framing and CRCs checked as decoding checks them. False for anything else: the caller then goes
// through Value(), which reports any error with the file's name.
bool CopyRecordContent(std::span<const std::byte> record, uint64_t offset, DType dtype,
                       const std::vector<int64_t>& shape, std::span<std::byte> out) {
  const StatusOr<tfrecord::RecordView> framed = tfrecord::ParseExactRecord(record, {}, offset);
  if (!framed.ok()) return false;
  const StatusOr<EventView> event = DecodeEvent(framed->payload);
  if (!event.ok() || !event->has_tensor || DTypeFromProto(event->raw_dtype) != dtype || event->shape != shape ||
      event->content.size() != out.size()) {
    return false;
  }
  if (!out.empty()) std::memcpy(out.data(), event->content.data(), out.size());
  return true;
}

}  // namespace

std::vector<Status> Trial::CopyValues(std::string_view name, std::span<const int64_t> steps, Mode mode, DType dtype,
                                      const std::vector<int64_t>& shape, std::span<std::byte> out) const {
  std::vector<Status> statuses(steps.size());
  if (steps.empty()) return statuses;
  const size_t each = out.size() / steps.size();
  const auto mismatch = [&](int64_t step) {
    return InvalidArgumentError("tensor '" + std::string(name) + "' at " + StepText(step, mode) +
                                ": not of the dtype and shape of the others");
  };
  // Through Value(): the cache, reads, and every error exactly as Value() reports it.
  const auto copy_value = [&](size_t i) {
    StatusOr<TensorPtr> value = Value(name, steps[i], mode);
    if (!value.ok()) return value.status();
    const Tensor& t = **value;
    if (t.is_string() || t.dtype() != dtype || t.shape() != shape || t.bytes().size() != each) return mismatch(steps[i]);
    if (each != 0) std::memcpy(out.data() + i * each, t.bytes().data(), each);
    return OkStatus();
  };
  // In place from a mapped file: a tensor_content record of the expected dtype and shape, with
  // the same framing and CRC checks as decoding; anything else takes the Value() path.
  const auto copy_record = [&](size_t i, const internal::CatalogEntry& entry, const FileMapping& mapped) -> bool {
    const uint64_t start = impl_->catalog.files().start(entry);
    if (start > mapped.bytes.size() || entry.length > mapped.bytes.size() - start) return false;
    const std::span<const std::byte> record =
        mapped.bytes.subspan(static_cast<size_t>(start), static_cast<size_t>(entry.length));
    // (No file name: an error here only sends the step to Value(), which reports it.)
    return CopyRecordContent(record, start, dtype, shape, out.subspan(i * each, each));
  };
  // The tensor is looked up once; each step's entry and mapping in chunks: the entries first,
  // then their files' mappings under one lock (MappingCache::FindAll, keyed by the catalog's
  // strings: no path built per record), then the copies.
  const internal::TensorRecord* tensor =
      impl_->mapping_enabled() && each != 0 ? impl_->catalog.FindTensor(name) : nullptr;
  constexpr size_t kChunk = 64;
  const auto copy_chunk = [&](const size_t first, const size_t end) {  // REQUIRES: end - first <= kChunk
    std::array<const internal::CatalogEntry*, kChunk> entries{};
    std::array<MappingCache::Key, kChunk> keys{};
    std::array<std::optional<MappingCache::Entry>, kChunk> found;
    if (tensor != nullptr) {
      for (size_t i = first; i != end; ++i) {
        const std::optional<internal::TrialCatalog::ResolvedStep> resolved =
            impl_->catalog.ResolveTensorStep(*tensor, steps[i], mode);
        if (!resolved) continue;
        const internal::CatalogEntry& entry = resolved->entries.front();  // (the default worker)
        if (!entry.has_location() || entry.length > kMaxRecordLength) continue;
        entries[i - first] = &entry;
        keys[i - first] = impl_->MappingKey(entry);
      }
      impl_->mappings.FindAll(std::span(keys.data(), end - first), std::span(found.data(), end - first));
    }
    for (size_t i = first; i != end; ++i) {
      const internal::CatalogEntry* entry = entries[i - first];
      bool copied = false;
      if (entry != nullptr) {
        const std::optional<MappingCache::Entry>& known = found[i - first];
        const uint64_t start = impl_->catalog.files().start(*entry);
        if (known && known->mapping && start <= known->size && entry->length <= known->size - start) {
          copied = copy_record(i, *entry, *known->mapping);
        } else if (const std::optional<FileMapping> mapped =
                       impl_->MappingFor(impl_->catalog.files().of(*entry).event_file, start, entry->length)) {
          copied = copy_record(i, *entry, *mapped);  // (a file not known yet, or grown)
        }
      }
      if (!copied) statuses[i] = copy_value(i);
    }
  };
  tbb::parallel_for(tbb::blocked_range<size_t>(0, steps.size(), kChunk), [&](const tbb::blocked_range<size_t>& range) {
    for (size_t first = range.begin(); first < range.end(); first += kChunk) {
      copy_chunk(first, std::min(first + kChunk, range.end()));
    }
  });
  return statuses;
}

std::vector<std::vector<Status>> Trial::CopyValuesFileMajor(std::span<const ValuesTarget> targets, Mode mode) const {
  std::vector<std::vector<Status>> statuses(targets.size());
  for (size_t t = 0; t < targets.size(); ++t) statuses[t].resize(targets[t].steps.size());
  const auto each_of = [&](size_t t) { return targets[t].out.size() / std::max<size_t>(targets[t].steps.size(), 1); };
  // A record to copy: where it lies, and which target's step it is.
  struct Wanted {
    uint64_t start;
    uint32_t length;
    uint32_t file;  // CatalogEntry::file
    uint32_t target;
    uint32_t index;  // of the step in the target's steps
  };
  using Step = std::pair<uint32_t, uint32_t>;  // (target, index)
  // 1. Each target's steps resolved to their records (the targets in parallel); steps without a
  //    record to read (unknown, no raw value, an empty value) go through Value().
  std::vector<std::vector<Wanted>> resolved(targets.size());
  std::vector<std::vector<Step>> through_value(targets.size());
  tbb::parallel_for(size_t{0}, targets.size(), [&](size_t t) {
    const ValuesTarget& target = targets[t];
    const size_t each = each_of(t);
    const internal::TensorRecord* tensor = each != 0 ? impl_->catalog.FindTensor(target.name) : nullptr;
    resolved[t].reserve(tensor != nullptr ? target.steps.size() : 0);
    for (size_t i = 0; i < target.steps.size(); ++i) {
      const internal::CatalogEntry* entry = nullptr;
      if (tensor != nullptr) {
        if (const auto step = impl_->catalog.ResolveTensorStep(*tensor, target.steps[i], mode)) {
          entry = &step->entries.front();  // (the default worker)
          if (!entry->has_location() || entry->length > kMaxRecordLength) entry = nullptr;
        }
      }
      if (entry == nullptr) {
        through_value[t].emplace_back(static_cast<uint32_t>(t), static_cast<uint32_t>(i));
      } else {
        resolved[t].push_back({impl_->catalog.files().start(*entry), entry->length, entry->file,
                               static_cast<uint32_t>(t), static_cast<uint32_t>(i)});
      }
    }
  });
  // 2. Grouped by index file (a counting sort by CatalogEntry::file; an index file names one
  //    event file, and smdebug writes one of each per step and worker).
  const size_t num_files = impl_->catalog.files().size();
  std::vector<size_t> first_of(num_files + 1, 0);
  for (const auto& records : resolved) {
    for (const Wanted& w : records) ++first_of[w.file + 1];
  }
  std::vector<uint32_t> used;
  for (size_t f = 0; f < num_files; ++f) {
    if (first_of[f + 1] != 0) used.push_back(static_cast<uint32_t>(f));
    first_of[f + 1] += first_of[f];
  }
  std::vector<Wanted> by_file(first_of[num_files]);
  {
    std::vector<size_t> next(first_of.begin(), first_of.end() - 1);
    for (auto& records : resolved) {
      for (const Wanted& w : records) by_file[next[w.file]++] = w;
      records = {};
    }
  }
  // 3. The files in parallel: their records in coalesced runs, each run read with one Read()
  //    into the thread's buffer (reused, so it stays in cache and mapped) and each record's
  //    content checked and copied into its output. (Reading the contents straight into the
  //    outputs instead, one scatter read a run, measured slower on this project's benchmark
  //    machines, virtual machines where the kernel's first write to each fresh 4 KiB page of the
  //    output costs a trap: Trial.values() of 2000 steps x 200 tensors of 4 KiB 1.79-1.85 s
  //    against 1.65-1.67 s for the copy, and of 400 steps, arrays of 1.6 MB, 0.99-1.0 s against
  //    0.88-0.91 s.)
  struct Scratch {
    std::unique_ptr<std::byte[]> buffer;
    size_t capacity = 0;
    std::vector<Step> through_value;  // what did not copy
  };
  tbb::enumerable_thread_specific<Scratch> scratch;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, used.size(), 1), [&](const tbb::blocked_range<size_t>& range) {
    Scratch& local = scratch.local();
    for (size_t u = range.begin(); u != range.end(); ++u) {
      const uint32_t f = used[u];
      const std::span<Wanted> records(by_file.data() + first_of[f], first_of[f + 1] - first_of[f]);
      const auto fail = [&](std::span<const Wanted> failed) {
        for (const Wanted& w : failed) local.through_value.emplace_back(w.target, w.index);
      };
      const std::string path = Env::JoinPath(impl_->root, impl_->catalog.files()[f].event_file);
      const StatusOr<std::shared_ptr<RandomAccessFile>> file = impl_->files.Get(path);
      if (!file.ok()) {
        fail(records);
        continue;
      }
      const RandomAccessFile::Coalescing limits = (*file)->coalescing();
      std::sort(records.begin(), records.end(), [](const Wanted& a, const Wanted& b) { return a.start < b.start; });
      size_t first = 0;
      for (size_t i = 1; i <= records.size(); ++i) {
        if (i < records.size()) {
          const Wanted& prev = records[i - 1];
          const Wanted& next = records[i];
          const uint64_t prev_end = prev.start + prev.length;
          if (prev.length <= limits.max_record_bytes && next.length <= limits.max_record_bytes &&
              next.start >= prev_end && next.start - prev_end <= limits.max_gap_bytes &&
              next.start + next.length - records[first].start <= limits.max_read_bytes) {
            continue;
          }
        }
        const std::span<const Wanted> run(records.data() + first, i - first);
        first = i;
        const uint64_t begin = run.front().start;
        const size_t size = static_cast<size_t>(run.back().start + run.back().length - begin);
        if (size > local.capacity) {
          local.buffer.reset(new std::byte[size]);
          local.capacity = size;
        }
        const StatusOr<size_t> read = (*file)->Read(begin, std::span<std::byte>(local.buffer.get(), size));
        if (!read.ok()) {
          fail(run);
          continue;
        }
        for (const Wanted& w : run) {
          const ValuesTarget& target = targets[w.target];
          const size_t each = each_of(w.target);
          const uint64_t at = w.start - begin;
          const std::span<const std::byte> record(local.buffer.get() + at, w.length);
          const std::span<std::byte> out = target.out.subspan(w.index * each, each);
          if (at + w.length > *read || !CopyRecordContent(record, w.start, target.dtype, target.shape, out)) {
            fail(std::span(&w, 1));
          }
        }
      }
      // (A large record's buffer is not kept: the thread would hold it for the trial's life.)
      if (local.capacity > (size_t{16} << 20)) {
        local.buffer.reset();
        local.capacity = 0;
      }
    }
  });
  // 4. The rest through Value(): the cache, reads, and every error exactly as Value() reports it.
  std::vector<Step> rest;
  for (auto& steps : through_value) rest.insert(rest.end(), steps.begin(), steps.end());
  for (Scratch& local : scratch) rest.insert(rest.end(), local.through_value.begin(), local.through_value.end());
  tbb::parallel_for(size_t{0}, rest.size(), [&](size_t r) {
    const auto [t, i] = rest[r];
    const ValuesTarget& target = targets[t];
    const size_t each = each_of(t);
    const int64_t step = target.steps[i];
    StatusOr<TensorPtr> value = Value(target.name, step, mode);
    if (!value.ok()) {
      statuses[t][i] = value.status();
      return;
    }
    const Tensor& v = **value;
    if (v.is_string() || v.dtype() != target.dtype || v.shape() != target.shape || v.bytes().size() != each) {
      statuses[t][i] = InvalidArgumentError("tensor '" + std::string(target.name) + "' at " + StepText(step, mode) +
                                            ": not of the dtype and shape of the others");
      return;
    }
    if (each != 0) std::memcpy(target.out.data() + i * each, v.bytes().data(), each);
  });
  return statuses;
}

void Trial::Release(const std::vector<StepTensor>& keys) const {
  std::vector<TensorCache::Key> cache_keys;
  cache_keys.reserve(keys.size());
  for (const auto& [name, step] : keys) {
    const internal::TensorRecord* tensor = impl_->catalog.FindTensor(name);
    if (tensor == nullptr) continue;
    const internal::StepEntryList entries = impl_->catalog.StepEntries(*tensor, step);
    for (size_t i = 0; i < entries.size(); ++i) {
      if (!entries[i].has_location()) continue;
      cache_keys.push_back(Impl::CacheKey(entries[i]));
      if (Impl::Summarizable(entries[i])) cache_keys.push_back(Impl::SummaryKey(cache_keys.back()));
    }
  }
  impl_->cache.EraseAll(cache_keys);
}

void Trial::CollectStatistics(const std::optional<std::vector<std::string>>& tensors) const {
  std::lock_guard<std::mutex> lock(impl_->statistics_mu);
  impl_->statistics_all = !tensors.has_value();
  impl_->statistics_of.clear();
  if (tensors) impl_->statistics_of.insert(tensors->begin(), tensors->end());
  ++impl_->statistics_generation;
  impl_->statistics_any.store(impl_->statistics_all || !impl_->statistics_of.empty(), std::memory_order_relaxed);
}

std::vector<Trial::CollectedStatistics> Trial::TakeStatistics() const {
  std::lock_guard<std::mutex> lock(impl_->statistics_mu);
  return std::exchange(impl_->statistics, {});
}

StatusOr<double> Trial::Reduction(std::string_view name, int64_t step, layout::Reduction r, bool abs,
                                  Mode mode, const std::optional<std::string>& worker) const {
  LITMUS_ASSIGN_OR_RETURN(Impl::Resolved resolved, impl_->Resolve(name, step, mode, worker));
  const internal::CatalogEntry& entry = *resolved.entry;
  if (impl_->catalog.files().has_stored_reductions(entry)) {
    const auto& stored_reductions = impl_->catalog.files().extras(entry)->stored_reductions;
    if (const auto it = stored_reductions.find({r, abs}); it != stored_reductions.end()) {
      LITMUS_ASSIGN_OR_RETURN(TensorPtr stored,
                              impl_->Read(name, resolved.global_step, entry, Impl::StoredRecord(it->second)));
      return StoredReductionValue(*stored);
    }
  }
  if (!entry.has_location()) {
    return TrialErrorStatus(TrialError::kTensorUnavailableForStep,
                            "tensor '" + std::string(name) + "' at " + StepText(step, mode) + ": neither a raw value nor a stored " +
                                (abs ? "abs_" : "") + std::string(layout::ReductionName(r)) + " reduction");
  }
  // Recorded whatever answers it, a summary too: a summary made before any reduction was asked
  // holds more than the rules want.
  resolved.tensor->NoteReductionAsked(ReductionMemoKey(r, abs));
  if (const std::optional<double> summarized = impl_->SummaryMemo(entry, ReductionMemoKey(r, abs))) return *summarized;
  LITMUS_ASSIGN_OR_RETURN(TensorPtr value,
                          impl_->Read(name, resolved.global_step, entry, impl_->RawRecord(entry, name)));
  return impl_->MemoisedReduction(*value, r, abs);
}

uint32_t Trial::ReductionsAsked(std::string_view name) const {
  const internal::TensorRecord* tensor = impl_->catalog.FindTensor(name);
  return tensor == nullptr ? 0 : tensor->reductions_asked.load(std::memory_order_relaxed);
}

void Trial::NoteReductionAsked(std::string_view name, uint32_t reduction_key) const {
  const internal::TensorRecord* tensor = impl_->catalog.FindTensor(name);
  if (tensor != nullptr) tensor->NoteReductionAsked(reduction_key);
}

bool Trial::HasStoredReductions(std::string_view name, int64_t step) const {
  const StatusOr<Impl::Resolved> resolved = impl_->Resolve(name, step, Mode::kGlobal, std::nullopt);
  return resolved.ok() && impl_->catalog.files().has_stored_reductions(*resolved->entry);
}

StatusOr<std::vector<int64_t>> Trial::Shape(std::string_view name, int64_t step, Mode mode,
                                            const std::optional<std::string>& worker) const {
  LITMUS_ASSIGN_OR_RETURN(Impl::Resolved resolved, impl_->Resolve(name, step, mode, worker));
  const internal::CatalogEntry& entry = *resolved.entry;
  if (const std::vector<int64_t>* shape = impl_->catalog.files().shape(entry)) return *shape;
  if (!entry.has_location()) {
    return TrialErrorStatus(TrialError::kTensorUnavailableForStep,
                            "tensor '" + std::string(name) + "' at " + StepText(step, mode) + ": neither a shape nor a raw value saved");
  }
  LITMUS_ASSIGN_OR_RETURN(TensorPtr value,
                          impl_->Read(name, resolved.global_step, entry, impl_->RawRecord(entry, name)));
  return value->shape();
}

}  // namespace litmus
