// Tests for Env::Default() (LocalEnv): reads, mapped views, gather writes, exclusive create, rename, mkdir -p,
// error codes, replacing unsynced files, and ListFiles ordering, start_after filtering and subtree pruning.
#include "litmus/format/env.h"

#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "support/temp_dir.h"

namespace litmus {
namespace {

using testing::TempDir;

std::span<const std::byte> B(std::string_view s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

std::vector<std::string> Paths(const std::vector<FileEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.path);
  return out;
}

TEST(EnvTest, JoinPath) {
  EXPECT_EQ(Env::JoinPath("/a/b", "c/d"), "/a/b/c/d");
  EXPECT_EQ(Env::JoinPath("/a/b/", "c"), "/a/b/c");
  EXPECT_EQ(Env::JoinPath("/a/b//", "/c"), "/a/b/c");
  EXPECT_EQ(Env::JoinPath("/", "c"), "/c");
  EXPECT_EQ(Env::JoinPath("", "c"), "c");
  EXPECT_EQ(Env::JoinPath("a", ""), "a");
  EXPECT_EQ(Env::JoinPath("s3://bucket/prefix", "index/x.json"), "s3://bucket/prefix/index/x.json");
}

TEST(EnvTest, WriteReadRoundTrip) {
  TempDir dir;
  Env* env = Env::Default();
  const std::string path = Env::JoinPath(dir.str(), "f.bin");
  LITMUS_ASSERT_OK_AND_ASSIGN(auto file, env->NewWritableFile(path));
  const std::string big(1 << 20, 'x');
  const std::span<const std::byte> parts[] = {B("hello "), B(""), B("world"), B(big)};
  LITMUS_ASSERT_OK(file->Append(parts));
  LITMUS_ASSERT_OK(file->Append(B("!")));
  LITMUS_ASSERT_OK(file->Sync());
  LITMUS_ASSERT_OK(file->Close());
  LITMUS_ASSERT_OK(file->Close());  // idempotent
  EXPECT_EQ(file->Append(B("late")).code(), StatusCode::kFailedPrecondition);

  LITMUS_ASSERT_OK_AND_ASSIGN(auto reader, env->NewRandomAccessFile(path));
  LITMUS_ASSERT_OK_AND_ASSIGN(uint64_t size, reader->Size());
  EXPECT_EQ(size, 12u + big.size());
  std::string buf(5, '\0');
  LITMUS_ASSERT_OK_AND_ASSIGN(
      size_t n, reader->Read(6, std::as_writable_bytes(std::span(buf.data(), buf.size()))));
  EXPECT_EQ(n, 5u);
  EXPECT_EQ(buf, "world");
  // Short read at the end of the file; nothing past it.
  std::string tail(10, '\0');
  LITMUS_ASSERT_OK_AND_ASSIGN(
      n, reader->Read(size - 3, std::as_writable_bytes(std::span(tail.data(), tail.size()))));
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(tail.substr(0, 3), "xx!");
  LITMUS_ASSERT_OK_AND_ASSIGN(
      n, reader->Read(size + 100, std::as_writable_bytes(std::span(tail.data(), tail.size()))));
  EXPECT_EQ(n, 0u);

  LITMUS_ASSERT_OK_AND_ASSIGN(std::string all, env->ReadFileToString(path));
  EXPECT_EQ(all, "hello world" + big + "!");

  // NewWritableFile truncates.
  LITMUS_ASSERT_OK_AND_ASSIGN(auto again, env->NewWritableFile(path));
  LITMUS_ASSERT_OK(again->Close());
  LITMUS_ASSERT_OK_AND_ASSIGN(all, env->ReadFileToString(path));
  EXPECT_EQ(all, "");
}

// RandomAccessFile::Mapped: the bytes Read() gives, the file's size when it is asked, a new
// mapping once the file has grown (the earlier one stays valid), none for an empty file.
TEST(EnvTest, MappedViewsTheFileAsItIs) {
  TempDir dir;
  Env* env = Env::Default();
  const std::string path = Env::JoinPath(dir.str(), "f.bin");
  LITMUS_ASSERT_OK_AND_ASSIGN(auto writer, env->NewWritableFile(path));
  LITMUS_ASSERT_OK_AND_ASSIGN(auto reader, env->NewRandomAccessFile(path));
  EXPECT_FALSE(reader->Mapped().has_value()) << "an empty file has nothing to map";

  std::string first(100000, '\0');
  for (size_t i = 0; i < first.size(); ++i) first[i] = static_cast<char>(i * 7 + i / 251);
  LITMUS_ASSERT_OK(writer->Append(B(first)));
  const std::optional<FileMapping> mapped = reader->Mapped();
  ASSERT_TRUE(mapped.has_value());
  ASSERT_NE(mapped->owner, nullptr);
  ASSERT_EQ(mapped->bytes.size(), first.size());
  std::string read(first.size(), '\0');
  LITMUS_ASSERT_OK_AND_ASSIGN(size_t n, reader->Read(0, std::as_writable_bytes(std::span(read.data(), read.size()))));
  ASSERT_EQ(n, first.size());
  EXPECT_EQ(std::memcmp(mapped->bytes.data(), read.data(), n), 0);
  EXPECT_EQ(std::memcmp(mapped->bytes.data(), first.data(), n), 0);
  // Asked again without growth: the same mapping.
  EXPECT_EQ(reader->Mapped()->bytes.data(), mapped->bytes.data());

  // The file grows (a live trial): the next call maps all of it; the old view stays readable.
  const std::string second(5000, 'z');
  LITMUS_ASSERT_OK(writer->Append(B(second)));
  const std::optional<FileMapping> grown = reader->Mapped();
  ASSERT_TRUE(grown.has_value());
  ASSERT_EQ(grown->bytes.size(), first.size() + second.size());
  EXPECT_EQ(std::memcmp(grown->bytes.data(), first.data(), first.size()), 0);
  EXPECT_EQ(std::memcmp(grown->bytes.data() + first.size(), second.data(), second.size()), 0);
  EXPECT_EQ(std::memcmp(mapped->bytes.data(), first.data(), first.size()), 0);
  LITMUS_ASSERT_OK(writer->Close());

  // A view outlives its file object.
  const FileMapping kept = *grown;
  reader.reset();
  EXPECT_EQ(std::memcmp(kept.bytes.data() + first.size(), second.data(), second.size()), 0);
}

TEST(EnvTest, ManySmallPartsInOneAppend) {
  TempDir dir;
  const std::string path = Env::JoinPath(dir.str(), "parts");
  LITMUS_ASSERT_OK_AND_ASSIGN(auto file, Env::Default()->NewWritableFile(path));
  std::vector<std::string> storage;
  std::string expected;
  for (int i = 0; i < 3000; ++i) {  // more than IOV_MAX (1024) iovecs
    storage.push_back(std::to_string(i) + ",");
    expected += storage.back();
  }
  std::vector<std::span<const std::byte>> parts;
  for (const auto& s : storage) parts.push_back(B(s));
  LITMUS_ASSERT_OK(file->Append(parts));
  LITMUS_ASSERT_OK(file->Close());
  EXPECT_EQ(testing::ReadWholeFile(path), expected);
}

TEST(EnvTest, ErrorCodes) {
  TempDir dir;
  Env* env = Env::Default();
  const std::string missing = Env::JoinPath(dir.str(), "missing");
  auto r = env->NewRandomAccessFile(missing);
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find(missing), std::string::npos);
  EXPECT_EQ(env->ReadFileToString(missing).status().code(), StatusCode::kNotFound);
  std::vector<FileEntry> entries;
  EXPECT_EQ(env->ListFiles(missing, "", &entries).code(), StatusCode::kNotFound);
  EXPECT_EQ(env->RemoveFile(missing).code(), StatusCode::kNotFound);
  EXPECT_EQ(env->RenameFile(missing, missing + "2").code(), StatusCode::kNotFound);
  EXPECT_EQ(env->NewWritableFile(Env::JoinPath(missing, "f")).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(env->NewRandomAccessFile(dir.str()).status().code(), StatusCode::kInvalidArgument);
  LITMUS_ASSERT_OK_AND_ASSIGN(bool exists, env->FileExists(missing));
  EXPECT_FALSE(exists);
  LITMUS_ASSERT_OK_AND_ASSIGN(bool is_dir, env->IsDirectory(missing));
  EXPECT_FALSE(is_dir);
  LITMUS_ASSERT_OK_AND_ASSIGN(is_dir, env->IsDirectory(dir.str()));
  EXPECT_TRUE(is_dir);
  // A file in place of a directory.
  dir.WriteFile("plain", "x");
  EXPECT_EQ(env->ListFiles(Env::JoinPath(dir.str(), "plain"), "", &entries).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(env->CreateDirs(Env::JoinPath(dir.str(), "plain")).code(), StatusCode::kAlreadyExists);
  EXPECT_FALSE(env->CreateDirs(Env::JoinPath(dir.str(), "plain/sub")).ok());
  LITMUS_ASSERT_OK_AND_ASSIGN(exists, env->FileExists(Env::JoinPath(dir.str(), "plain/sub")));
  EXPECT_FALSE(exists);
}

TEST(EnvTest, ExclusiveFile) {
  TempDir dir;
  Env* env = Env::Default();
  const std::string path = Env::JoinPath(dir.str(), "claim.smd");
  LITMUS_ASSERT_OK_AND_ASSIGN(auto file, env->NewExclusiveFile(path));
  LITMUS_ASSERT_OK(file->Close());
  auto again = env->NewExclusiveFile(path);
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists) << again.status().ToString();
  LITMUS_ASSERT_OK(env->RemoveFile(path));
  LITMUS_ASSERT_OK_AND_ASSIGN(bool exists, env->FileExists(path));
  EXPECT_FALSE(exists);
  LITMUS_EXPECT_OK(env->NewExclusiveFile(path).status());
}

TEST(EnvTest, RenameReplacesAtomically) {
  TempDir dir;
  Env* env = Env::Default();
  dir.WriteFile("a.json.tmp", "new");
  dir.WriteFile("a.json", "old");
  LITMUS_ASSERT_OK_AND_ASSIGN(auto reader,
                              env->NewRandomAccessFile(Env::JoinPath(dir.str(), "a.json")));
  LITMUS_ASSERT_OK(
      env->RenameFile(Env::JoinPath(dir.str(), "a.json.tmp"), Env::JoinPath(dir.str(), "a.json")));
  EXPECT_EQ(testing::ReadWholeFile(dir.path() / "a.json"), "new");
  LITMUS_ASSERT_OK_AND_ASSIGN(bool exists, env->FileExists(Env::JoinPath(dir.str(), "a.json.tmp")));
  EXPECT_FALSE(exists);
  // A reader opened before the rename keeps seeing the old file (rename never mutates it).
  std::string buf(3, '\0');
  LITMUS_ASSERT_OK_AND_ASSIGN(size_t n,
                              reader->Read(0, std::as_writable_bytes(std::span(buf.data(), 3))));
  EXPECT_EQ(buf.substr(0, n), "old");
}

// ReplaceUnsyncedFile (renameat2's exchange, then the old content removed) is, to its readers, the
// same atomic replace; with no file to replace yet, or no file to put in place, a rename's.
TEST(EnvTest, ReplaceUnsyncedFileReplacesAtomically) {
  TempDir dir;
  Env* env = Env::Default();
  const std::string target = Env::JoinPath(dir.str(), "report.html");
  const std::string temp = Env::JoinPath(dir.str(), "report.html.tmp");
  dir.WriteFile("report.html.tmp", "first");
  LITMUS_ASSERT_OK(env->ReplaceUnsyncedFile(temp, target));  // (nothing to replace yet)
  EXPECT_EQ(testing::ReadWholeFile(dir.path() / "report.html"), "first");
  LITMUS_ASSERT_OK_AND_ASSIGN(auto reader, env->NewRandomAccessFile(target));
  dir.WriteFile("report.html.tmp", "second");
  LITMUS_ASSERT_OK(env->ReplaceUnsyncedFile(temp, target));
  EXPECT_EQ(testing::ReadWholeFile(dir.path() / "report.html"), "second");
  // Only the target is left: the replaced content is gone from the folder...
  std::vector<FileEntry> files;
  LITMUS_ASSERT_OK(env->ListFiles(dir.str(), "", &files));
  EXPECT_EQ(Paths(files), std::vector<std::string>{"report.html"});
  // ...and a reader opened before keeps seeing it.
  std::string buf(5, '\0');
  LITMUS_ASSERT_OK_AND_ASSIGN(size_t n, reader->Read(0, std::as_writable_bytes(std::span(buf.data(), 5))));
  EXPECT_EQ(buf.substr(0, n), "first");
  EXPECT_EQ(env->ReplaceUnsyncedFile(temp, target).code(), StatusCode::kNotFound);  // (no temp file)
  EXPECT_EQ(testing::ReadWholeFile(dir.path() / "report.html"), "second");
}

TEST(EnvTest, CreateDirs) {
  TempDir dir;
  Env* env = Env::Default();
  const std::string deep = Env::JoinPath(dir.str(), "a/b//c/d");
  LITMUS_ASSERT_OK(env->CreateDirs(deep));
  LITMUS_ASSERT_OK(env->CreateDirs(deep));  // exists: fine
  LITMUS_ASSERT_OK(env->CreateDirs(deep + "/"));
  LITMUS_ASSERT_OK_AND_ASSIGN(bool is_dir, env->IsDirectory(Env::JoinPath(dir.str(), "a/b/c/d")));
  EXPECT_TRUE(is_dir);
  // Relative paths work too.
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const Status rel = env->CreateDirs("rel/x");
  std::filesystem::current_path(cwd);
  LITMUS_ASSERT_OK(rel);
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / "rel/x"));
  EXPECT_EQ(env->CreateDirs("").code(), StatusCode::kInvalidArgument);
}

class ListFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Names chosen so that per-directory name order differs from full-path byte order:
    // "a.txt" < "a/x" because '.' (0x2e) < '/' (0x2f), although "a" < "a.txt".
    for (std::string_view f :
         {"a.txt", "a/x", "a/y/z", "a-b", "b", "index/000000000/000000000000_worker_0.json",
          "index/000000000/000000000001_worker_0.json",
          "index/000000000/000000000001_worker_1.json",
          "index/000000000/000000000002_worker_0.json.tmp",
          "index/000000001/000000001000_worker_0.json", "zz/deep/er/file"}) {
      dir_.WriteFile(f, std::string(f.size(), 'd'));
    }
    std::filesystem::create_directories(dir_.path() / "empty/dir");
  }

  std::vector<std::string> List(std::string_view start_after, const std::string& sub = "") {
    std::vector<FileEntry> entries;
    const Status s = Env::Default()->ListFiles(
        sub.empty() ? dir_.str() : Env::JoinPath(dir_.str(), sub), start_after, &entries);
    EXPECT_TRUE(s.ok()) << s.ToString();
    for (const auto& e : entries)
      EXPECT_EQ(e.size, e.path.size() + (sub.empty() ? 0 : sub.size() + 1)) << e.path;
    return Paths(entries);
  }

  TempDir dir_;
};

TEST_F(ListFilesTest, RecursiveAndSortedBytewise) {
  const std::vector<std::string> all = List("");
  const std::vector<std::string> expected = {"a-b",
                                             "a.txt",
                                             "a/x",
                                             "a/y/z",
                                             "b",
                                             "index/000000000/000000000000_worker_0.json",
                                             "index/000000000/000000000001_worker_0.json",
                                             "index/000000000/000000000001_worker_1.json",
                                             "index/000000000/000000000002_worker_0.json.tmp",
                                             "index/000000001/000000001000_worker_0.json",
                                             "zz/deep/er/file"};
  EXPECT_EQ(all, expected);
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
}

TEST_F(ListFilesTest, StartAfterMatchesFilteringTheFullListing) {
  const std::vector<std::string> all = List("");
  // Every listed path, every directory prefix, and strings between/around them.
  std::vector<std::string> cuts = all;
  for (std::string_view extra :
       {"", "a", "a/", "a/y", "a/y/", "a0", "index", "index/", "index/000000000",
        "index/000000000/", "index/000000000/000000000001_worker_0.json~", "index/0000000005",
        "index/000000001/", "y", "zz/deep/er/file0", "\xff"}) {
    cuts.emplace_back(extra);
  }
  for (const std::string& cut : cuts) {
    std::vector<std::string> expected;
    for (const auto& p : all) {
      if (p > cut) expected.push_back(p);
    }
    EXPECT_EQ(List(cut), expected) << "start_after=" << cut;
  }
}

TEST_F(ListFilesTest, ListsASubdirectoryIncrementally) {
  EXPECT_EQ(List("000000000/000000000001_worker_0.json", "index"),
            (std::vector<std::string>{"000000000/000000000001_worker_1.json",
                                      "000000000/000000000002_worker_0.json.tmp",
                                      "000000001/000000001000_worker_0.json"}));
}

// Pruning, observed through inotify: a subtree that sorts entirely before start_after is never
// even opened, while the directories on the way to newer files are.
TEST_F(ListFilesTest, DoesNotOpenSubtreesBeforeStartAfter) {
  const int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::map<int, std::string> watched;
  for (std::string_view sub :
       {"a", "a/y", "empty", "index", "index/000000000", "index/000000001", "zz"}) {
    const int wd = inotify_add_watch(fd, (dir_.path() / sub).c_str(), IN_OPEN);
    ASSERT_GE(wd, 0) << sub;
    watched[wd] = sub;
  }
  auto opened_dirs = [&] {
    std::set<std::string> opened;
    alignas(inotify_event) char buf[8192];
    while (true) {
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) break;
      for (ssize_t off = 0; off < n;) {
        const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
        if ((ev->mask & IN_OPEN) && ev->len == 0) opened.insert(watched[ev->wd]);  // the dir itself
        off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
      }
    }
    return opened;
  };

  // The engine's incremental case: everything up to the last index file seen.
  EXPECT_EQ(List("index/000000001/000000001000_worker_0.json"),
            std::vector<std::string>{"zz/deep/er/file"});
  EXPECT_EQ(opened_dirs(), (std::set<std::string>{"index", "index/000000001", "zz"}));

  // Control: a full listing opens every watched directory.
  EXPECT_EQ(List("").size(), 11u);
  EXPECT_EQ(opened_dirs(), (std::set<std::string>{"a", "a/y", "empty", "index", "index/000000000",
                                                  "index/000000001", "zz"}));
  close(fd);
}

TEST_F(ListFilesTest, SkipsSymlinkedDirectoriesButListsSymlinkedFiles) {
  std::filesystem::create_directory_symlink(dir_.path() / "a", dir_.path() / "link_dir");
  std::filesystem::create_symlink(dir_.path() / "b", dir_.path() / "link_file");
  std::filesystem::create_symlink(dir_.path() / "nowhere", dir_.path() / "link_dangling");
  std::vector<FileEntry> entries;
  LITMUS_ASSERT_OK(Env::Default()->ListFiles(dir_.str(), "", &entries));
  const auto all = Paths(entries);
  const auto link = std::find(all.begin(), all.end(), "link_file");
  ASSERT_NE(link, all.end());
  EXPECT_EQ(entries[static_cast<size_t>(link - all.begin())].size, 1u);  // size of the target
  EXPECT_EQ(std::find(all.begin(), all.end(), "link_dir/x"), all.end());
  EXPECT_EQ(std::find(all.begin(), all.end(), "link_dangling"), all.end());
}

}  // namespace
}  // namespace litmus
