// RuleSourceCopies (rule_source.h): fetches s3:// rule sources into a private temporary folder.
#include "run/rule_source.h"

#include <spdlog/spdlog.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

namespace litmus {

RuleSourceCopies::~RuleSourceCopies() {
  if (folder_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(folder_, ec);
  if (ec) spdlog::warn("cannot remove the rule source copies in {}: {}", folder_, ec.message());
}

Status RuleSourceCopies::MakeFolder() {
  if (!folder_.empty()) return OkStatus();
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);  // $TMPDIR, else /tmp
  if (ec) base = "/tmp";
  std::string pattern = (base / "litmus-rule-source-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {  // mode 0700: the copies are this user's alone
    return InternalError("cannot create a folder for rule sources in " + base.string() + ": " +
                         std::strerror(errno));
  }
  folder_ = pattern;
  return OkStatus();
}

StatusOr<std::string> RuleSourceCopies::Fetch(Env* env, const std::string& uri) {
  if (auto it = copies_.find(uri); it != copies_.end()) return it->second;
  const std::string what = "source_s3_uri " + uri;
  // The contract's source_s3_uri is the S3 URI of one Python file (docs/job-contract.md §3).
  const size_t slash = uri.find('/', std::string_view("s3://").size());
  if (slash == std::string::npos || slash + 1 == uri.size() || uri.back() == '/') {
    return InvalidArgumentError(what + ": not an object: give the S3 URI of the Python file (s3://bucket/key.py)");
  }
  auto file = env->NewRandomAccessFile(uri);
  if (!file.ok()) {
    if (file.status().code() == StatusCode::kNotFound) return NotFoundError(what + ": no such object");
    return Status(file.status().code(), what + ": cannot read it: " + std::string(file.status().message()));
  }
  LITMUS_ASSIGN_OR_RETURN(const uint64_t size, (*file)->Size());
  if (size > kMaxBytes) {
    return InvalidArgumentError(what + ": " + std::to_string(size) + " bytes; a rule source may hold at most " +
                                std::to_string(kMaxBytes) + " bytes");
  }
  std::vector<std::byte> bytes(size);
  if (size > 0) {
    auto read = (*file)->Read(0, bytes);
    if (!read.ok()) return Status(read.status().code(), what + ": cannot read it: " + std::string(read.status().message()));
    if (*read != size) {
      return UnavailableError(what + ": read " + std::to_string(*read) + " of its " + std::to_string(size) + " bytes");
    }
  }
  LITMUS_RETURN_IF_ERROR(MakeFolder());
  // <folder>/<n>/<file name of the key>: two sources with the same file name never collide.
  const std::filesystem::path dir = std::filesystem::path(folder_) / std::to_string(copies_.size());
  const std::filesystem::path local = dir / uri.substr(uri.rfind('/') + 1);
  std::error_code ec;
  std::filesystem::create_directory(dir, ec);
  std::ofstream out(local, std::ios::binary | std::ios::trunc);
  if (!ec && out) out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(size));
  if (ec || !out.flush()) {
    return InternalError(what + ": cannot write its local copy " + local.string() + ": " +
                         (ec ? ec.message() : std::strerror(errno)));
  }
  spdlog::debug("{}: {} bytes, local copy {}", what, size, local.string());
  copies_.emplace(uri, local.string());
  return local.string();
}

}  // namespace litmus
