// Test helper: enumerates files of the vendored smdebug fixture trials. Single-threaded.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "support/temp_dir.h"

namespace litmus::testing {

inline std::filesystem::path FixturesRoot() {
  return std::filesystem::path(LITMUS_FIXTURES_DIR) / "smdebug";
}

// Every fixture file whose name ends in `suffix`, sorted.
inline std::vector<std::filesystem::path> FixtureFilesEndingIn(std::string_view suffix) {
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(FixturesRoot())) {
    if (entry.is_regular_file() && entry.path().string().ends_with(suffix))
      out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::span<const std::byte> AsBytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

}  // namespace litmus::testing
