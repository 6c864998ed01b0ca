// Test helpers: temporary folders and file utilities.
#include "support/temp_dir.h"

#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>

namespace litmus::testing {

TempDir::TempDir() {
  std::random_device rd;
  const auto base = std::filesystem::temp_directory_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto candidate = base / ("litmus-test-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
    std::error_code ec;
    if (std::filesystem::create_directory(candidate, ec)) {
      path_ = candidate;
      return;
    }
  }
  ADD_FAILURE() << "could not create a temporary folder";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

void TempDir::WriteFile(std::string_view relative, std::string_view content) const {
  const auto full = path_ / std::filesystem::path(std::string(relative));
  std::filesystem::create_directories(full.parent_path());
  std::ofstream out(full, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

std::string ReadWholeFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void CopyTree(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::filesystem::create_directories(to);
  std::filesystem::copy(from, to,
                        std::filesystem::copy_options::recursive |
                            std::filesystem::copy_options::overwrite_existing);
}

std::filesystem::path FixturePath(std::string_view name) {
  return std::filesystem::path(LITMUS_FIXTURES_DIR_FOR_SUPPORT) / "smdebug" / std::string(name);
}

}  // namespace litmus::testing
