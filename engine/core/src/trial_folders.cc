// ForEachIndexFolder, CheckRecordsByFolder, WriteDocumentByFolder and WriteValuesByFolder
// (trial_folders.h): a Trial per index folder, seen through FolderEnv, an Env that shows the
// Trial only that folder of the index; the with-values outputs through a SpillFile.
#include "litmus/engine/trial_folders.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "litmus/format/forwarding_env.h"
#include "litmus/format/trial_layout.h"

namespace litmus {
namespace {

// `base` with the index folder (root/index) reduced to its subfolder `folder` (e.g. "000000003"):
// ListFiles of root/index lists only root/index/<folder>, its paths prefixed "<folder>/" as a
// listing of the whole index would give them. Everything else goes to `base` unchanged.
class FolderEnv : public ForwardingEnv {
 public:
  FolderEnv(Env* base, std::string index_dir, std::string folder)
      : ForwardingEnv(base), index_dir_(std::move(index_dir)), folder_(std::move(folder)) {}

  Status ListFiles(const std::string& dir, std::string_view start_after, std::vector<FileEntry>* out) override {
    if (dir != index_dir_) return base()->ListFiles(dir, start_after, out);
    const std::string prefix = folder_ + "/";
    std::string_view after;  // within the folder
    if (start_after.starts_with(prefix)) {
      after = start_after.substr(prefix.size());
    } else if (!start_after.empty() && start_after > std::string_view(prefix)) {
      return OkStatus();  // the cursor is past the whole folder
    }
    const size_t first = out->size();
    LITMUS_RETURN_IF_ERROR(base()->ListFiles(Env::JoinPath(index_dir_, folder_), after, out));
    for (size_t i = first; i < out->size(); ++i) (*out)[i].path.insert(0, prefix);
    return OkStatus();
  }

 private:
  std::string index_dir_;
  std::string folder_;
};

// As trial_document.cc: what a read may fail with that is damage, not an expected outcome.
bool IsDamage(const Status& status) {
  return status.code() == StatusCode::kDataLoss || status.code() == StatusCode::kUnimplemented;
}

// An unnamed temporary file (created in temp_directory_path(): $TMPDIR or /tmp, and removed
// from its folder at once) that pieces are appended to, then copied out of by offset.
class SpillFile {
 public:
  static StatusOr<std::unique_ptr<SpillFile>> Create() {
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
    if (ec) dir = "/tmp";
    std::string path = (dir / "litmus-inspect.XXXXXX").string();
    const int fd = ::mkstemp(path.data());
    if (fd < 0) return UnavailableError("cannot create a temporary file in " + dir.string());
    auto spill = std::unique_ptr<SpillFile>(new SpillFile());
    spill->file_.rdbuf()->pubsetbuf(spill->buffer_.data(), static_cast<std::streamsize>(spill->buffer_.size()));
    spill->file_.open(path, std::ios::in | std::ios::out | std::ios::binary | std::ios::trunc);
    ::close(fd);
    std::filesystem::remove(path, ec);
    if (!spill->file_.is_open()) return UnavailableError("cannot open the temporary file " + path);
    return spill;
  }
  std::ostream& stream() { return file_; }
  // Bytes appended so far. REQUIRES: only writes since Create().
  uint64_t size() { return static_cast<uint64_t>(file_.tellp()); }
  Status status() const {
    return file_.good() ? OkStatus() : UnavailableError("cannot write the temporary file (TMPDIR full?)");
  }
  // Copies [offset, offset + length) to `out`, skipping its first `skip` bytes.
  Status CopyTo(uint64_t offset, uint64_t length, std::ostream& out) {
    if (!reading_) {
      file_.flush();  // (the last appended bytes: a full TMPDIR shows here at the latest)
      if (!file_.good()) return status();
      reading_ = true;
    }
    file_.seekg(static_cast<std::streamoff>(offset));
    std::vector<char> chunk(std::min<uint64_t>(length, 1 << 20));
    while (length > 0 && file_.good()) {
      const auto n = static_cast<std::streamsize>(std::min<uint64_t>(length, chunk.size()));
      file_.read(chunk.data(), n);
      out.write(chunk.data(), file_.gcount());
      length -= static_cast<uint64_t>(file_.gcount());
      if (file_.gcount() != n) break;
    }
    if (length > 0) return DataLossError("cannot read back the temporary file");
    return OkStatus();
  }

 private:
  SpillFile() : buffer_(1 << 20) {}
  std::vector<char> buffer_;  // (before file_: its buffer)
  std::fstream file_;
  bool reading_ = false;
};

// Tensor `name`'s part of the output at `steps` (its steps in one folder), from that folder's Trial.
using PieceWriter =
    std::function<Status(const Trial& trial, const std::string& name, std::span<const int64_t> steps, std::ostream& out)>;

struct Piece {
  uint64_t offset = 0;
  uint64_t length = 0;
};
// What the pass over the folders left: the pieces of each selected tensor in folder order, and
// the first error in output order (a record a writer failed on) with its tensor.
struct Spilled {
  std::unique_ptr<SpillFile> file;
  std::vector<std::vector<Piece>> pieces;
  size_t failed_tensor = 0;
  std::optional<Status> failure;
};

// Whether each known step's own (mode, mode step) belongs to it alone: GLOBAL-mode steps have
// their global step as mode step, and each other mode's mode steps increase with the global
// steps (the usual layout; a repeated or decreasing one is left to a Trial). With every record's
// entries in its step's own mode (checked as they are read), a value asked for by (mode, mode
// step) then resolves to the record's own step in a folder's Trial as in the whole trial's.
bool ModeStepsAreOwnAndUnique(const TrialOutline& outline) {
  std::map<Mode, int64_t> last;
  bool unique = true;
  outline.ForEachStep([&](int64_t g, bool) {
    if (!unique) return;
    const auto own = outline.ModeOfGlobalStep(g);
    if (!own) {
      unique = false;
    } else if (own->first == Mode::kGlobal) {
      unique = own->second == g;
    } else {
      const auto [it, inserted] = last.try_emplace(own->first, own->second);
      if (!inserted) {
        unique = own->second > it->second;
        it->second = own->second;
      }
    }
  });
  return unique;
}

// The pass over the folders (trial_folders.h): nullopt if the folders cannot give a Trial's output.
StatusOr<std::optional<Spilled>> SpillByFolder(Env* env, const SelectedOutline& selected, const TrialOptions& options,
                                               const PieceWriter& write_piece) {
  const TrialOutline& outline = selected.trial();
  const std::vector<std::string>& names = selected.tensor_names();
  if (!ModeStepsAreOwnAndUnique(outline)) return std::optional<Spilled>();
  std::vector<int64_t> expected(names.size(), 0), seen(names.size(), 0);
  for (size_t i = 0; i < names.size(); ++i) {
    outline.ForEachTensorStep(names[i], [&](int64_t g) { expected[i] += selected.IncludesStep(g); });
  }
  Spilled out;
  LITMUS_ASSIGN_OR_RETURN(out.file, SpillFile::Create());
  out.pieces.resize(names.size());
  out.failed_tensor = names.size();  // tensors from here on are not written (output stops before)
  bool irregular = false;
  std::vector<int64_t> tensor_steps;
  const Status read = ForEachIndexFolder(
      env, outline.root(), options, selected.steps(),
      [&](const Trial& trial, std::span<const int64_t> folder_steps) -> Status {
        std::vector<std::optional<std::pair<Mode, int64_t>>> own(folder_steps.size());
        for (size_t k = 0; k < folder_steps.size(); ++k) own[k] = outline.ModeOfGlobalStep(folder_steps[k]);
        for (size_t i = 0; i < names.size() && i < out.failed_tensor; ++i) {
          tensor_steps.clear();
          for (size_t k = 0; k < folder_steps.size(); ++k) {
            const std::vector<TensorEntry> entries = trial.Entries(names[i], folder_steps[k]);
            if (entries.empty()) continue;
            for (const TensorEntry& e : entries) {
              if (!own[k] || own[k]->first != e.mode || own[k]->second != e.mode_step) irregular = true;
            }
            // (Stops the pass; told apart from a real error by `irregular` below.)
            if (irregular) return FailedPreconditionError("irregular layout");
            ++seen[i];
            tensor_steps.push_back(folder_steps[k]);
          }
          if (tensor_steps.empty()) continue;
          const uint64_t offset = out.file->size();
          const Status written = write_piece(trial, names[i], tensor_steps, out.file->stream());
          LITMUS_RETURN_IF_ERROR(out.file->status());
          const uint64_t end = out.file->size();
          if (end > offset) out.pieces[i].push_back({offset, end - offset});
          if (!written.ok()) {
            // The first failure in output order: this tensor's later pieces and every later
            // tensor's are not written.
            out.failed_tensor = i;
            out.failure = written;
          }
        }
        return OkStatus();
      });
  if (irregular) return std::optional<Spilled>();
  LITMUS_RETURN_IF_ERROR(read);
  for (size_t i = 0; i < names.size() && i < out.failed_tensor; ++i) {
    if (seen[i] != expected[i]) return std::optional<Spilled>();  // an index file outside its step's folder
  }
  return std::optional<Spilled>(std::move(out));
}

// Copies tensor i's pieces to `out` (the first `skip_first` bytes of its first piece left out),
// then returns the pass's failure if it was this tensor's.
Status CopyPieces(Spilled& spilled, size_t i, size_t skip_first, std::ostream& out) {
  bool first = true;
  for (const Piece& piece : spilled.pieces[i]) {
    const uint64_t skip = first ? std::min<uint64_t>(skip_first, piece.length) : 0;
    LITMUS_RETURN_IF_ERROR(spilled.file->CopyTo(piece.offset + skip, piece.length - skip, out));
    first = false;
  }
  if (spilled.failure && i == spilled.failed_tensor) return *spilled.failure;
  return out.good() ? OkStatus() : UnavailableError("cannot write the output (closed or full)");
}

}  // namespace

StatusOr<bool> WriteDocumentByFolder(Env* env, const SelectedOutline& selected, const TrialOptions& options,
                                     const TrialDocumentOptions& document_options, std::ostream& out) {
  LITMUS_ASSIGN_OR_RETURN(
      std::optional<Spilled> spilled,
      SpillByFolder(env, selected, options,
                    [&](const Trial& trial, const std::string& name, std::span<const int64_t> steps, std::ostream& piece) {
                      return WriteStepRecords(trial, name, steps, document_options, piece);
                    }));
  if (!spilled) return false;
  // (Each record starts ",\n"; the first of a tensor "\n".)
  const PerStepWriter per_step = [&](size_t i, std::ostream& o) { return CopyPieces(*spilled, i, 1, o); };
  LITMUS_RETURN_IF_ERROR(WriteTrialDocument(selected, document_options, per_step, out));
  return true;
}

StatusOr<bool> WriteValuesByFolder(Env* env, const SelectedOutline& selected, const TrialOptions& options,
                                   const TrialValuesOptions& values_options, std::ostream& out) {
  const bool several_workers = selected.trial().workers().size() > 1;
  LITMUS_ASSIGN_OR_RETURN(
      std::optional<Spilled> spilled,
      SpillByFolder(env, selected, options,
                    [&](const Trial& trial, const std::string& name, std::span<const int64_t> steps, std::ostream& piece) {
                      return WriteTensorValueLines(trial, name, steps, several_workers, values_options, piece);
                    }));
  if (!spilled) return false;
  const std::vector<std::string>& names = selected.tensor_names();
  for (size_t i = 0; i < names.size(); ++i) {
    out << names[i] << "\n";
    LITMUS_RETURN_IF_ERROR(CopyPieces(*spilled, i, 0, out));
  }
  out.flush();
  if (!out.good()) return UnavailableError("cannot write the listing (output closed or full)");
  return true;
}

Status ForEachIndexFolder(Env* env, const std::string& root, const TrialOptions& options,
                          std::span<const int64_t> steps,
                          const std::function<Status(const Trial&, std::span<const int64_t>)>& f) {
  const std::string index_dir = Env::JoinPath(root, layout::kIndexDir);
  const std::string index_prefix = std::string(layout::kIndexDir) + "/";
  const int64_t per_folder = layout::kIndexFilesPerFolder;
  for (size_t first = 0; first < steps.size();) {
    const int64_t folder = steps[first] / per_folder;
    size_t end = first;
    while (end < steps.size() && steps[end] / per_folder == folder) ++end;
    FolderEnv folder_env(env, index_dir, layout::IndexFolder(folder * per_folder).substr(index_prefix.size()));
    TrialOptions folder_options = options;
    folder_options.range_begin = std::max(options.range_begin, folder * per_folder);
    folder_options.range_end = std::min(options.range_end, (folder + 1) * per_folder);
    LITMUS_ASSIGN_OR_RETURN(std::unique_ptr<Trial> trial, Trial::Open(&folder_env, root, folder_options));
    LITMUS_RETURN_IF_ERROR(f(*trial, steps.subspan(first, end - first)));
    first = end;
  }
  return OkStatus();
}

StatusOr<RecordCheck> CheckRecordsByFolder(Env* env, const SelectedOutline& selected, const TrialOptions& options,
                                           size_t max_listed, bool check_records) {
  const TrialOutline& outline = selected.trial();
  const std::vector<std::string>& names = selected.tensor_names();
  // Per selected tensor: its number of selected steps and the last of them (from the outline).
  constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> expected(names.size(), 0), seen(names.size(), 0), last(names.size(), kNone);
  for (size_t i = 0; i < names.size(); ++i) {
    outline.ForEachTensorStep(names[i], [&](int64_t g) {
      if (!selected.IncludesStep(g)) return;
      ++expected[i];
      last[i] = g;
    });
  }
  std::vector<int64_t> steps;
  if (check_records) {
    steps = selected.steps();
  } else {
    for (int64_t g : last) {
      if (g != kNone) steps.push_back(g);
    }
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  }

  RecordCheck out;
  // Damage in the order FindDamagedRecords meets it: (tensor, step, worker, item), item 0 the raw
  // value and 1.. the stored reductions; the folders come step by step, so the first
  // `max_listed` are kept sorted as they arrive.
  using Key = std::tuple<size_t, int64_t, size_t, size_t>;
  std::vector<std::pair<Key, Status>> listed;
  const auto damaged = [&](Key key, const Status& status) {
    ++out.damage.count;
    if (listed.size() >= max_listed && !(key < listed.back().first)) return;
    const auto at = std::upper_bound(listed.begin(), listed.end(), key,
                                     [](const Key& k, const std::pair<Key, Status>& item) { return k < item.first; });
    listed.insert(at, {key, status});
    if (listed.size() > max_listed) listed.pop_back();
  };

  // Records of a few steps are read together (Trial::Prefetch: one read for the records of an
  // event file that lie together, the files in parallel), up to this many bytes at a time.
  constexpr uint64_t kBatchBytes = 16 << 20;
  constexpr size_t kBatchSteps = 16;
  struct Present {
    size_t tensor;
    int64_t step;
    std::vector<TensorEntry> entries;
  };
  const Status read = ForEachIndexFolder(
      env, outline.root(), options, steps, [&](const Trial& trial, std::span<const int64_t> folder_steps) -> Status {
        for (size_t first = 0; first < folder_steps.size();) {
          std::vector<Present> present;
          std::vector<Trial::StepTensor> keys;
          uint64_t bytes = 0;
          size_t next = first;
          for (; next < folder_steps.size() && next - first < kBatchSteps && bytes < kBatchBytes; ++next) {
            const int64_t g = folder_steps[next];
            for (size_t i = 0; i < names.size(); ++i) {
              if (!check_records && last[i] != g) continue;
              std::vector<TensorEntry> entries = trial.Entries(names[i], g);
              if (entries.empty()) continue;
              for (const TensorEntry& e : entries) bytes += e.location ? e.location->length : 0;
              keys.emplace_back(names[i], g);
              present.push_back({i, g, std::move(entries)});
            }
          }
          first = next;
          if (check_records) trial.Prefetch(keys);
          for (const Present& p : present) {
            const std::string& name = names[p.tensor];
            ++seen[p.tensor];
            if (p.step == last[p.tensor]) out.looks[name] = LookAtTensor(trial, name, p.step);
            if (!check_records) continue;
            for (size_t w = 0; w < p.entries.size(); ++w) {
              const TensorEntry& entry = p.entries[w];
              if (entry.location) {
                auto value = trial.Value(name, p.step, Mode::kGlobal, entry.worker);
                if (!value.ok() && IsDamage(value.status())) damaged({p.tensor, p.step, w, 0}, value.status());
              }
              size_t item = 1;
              for (const auto& [key, location] : entry.stored_reductions) {
                auto r = trial.Reduction(name, p.step, key.first, key.second, Mode::kGlobal, entry.worker);
                if (!r.ok() && IsDamage(r.status())) damaged({p.tensor, p.step, w, item}, r.status());
                ++item;
              }
            }
          }
          trial.Release(keys);
        }
        return OkStatus();
      });
  LITMUS_RETURN_IF_ERROR(read);
  for (size_t i = 0; i < names.size(); ++i) {
    const int64_t want = check_records ? expected[i] : (last[i] == kNone ? 0 : 1);
    if (seen[i] != want) {
      return UnimplementedError("tensor '" + names[i] + "': the index folders hold " + std::to_string(seen[i]) +
                                " of its " + std::to_string(want) + " selected records (an index file outside its step's folder)");
    }
  }
  for (auto& [key, status] : listed) out.damage.listed.push_back(std::move(status));
  return out;
}

}  // namespace litmus
