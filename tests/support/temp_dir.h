// Test helpers: a self-deleting temporary folder, file helpers and Status matchers.
// Not thread-safe; one TempDir per test.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "litmus/status.h"

namespace litmus::testing {

// A fresh folder under the system temp dir, removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  // Writes `content` to path()/relative, creating parent folders.
  void WriteFile(std::string_view relative, std::string_view content) const;

 private:
  std::filesystem::path path_;
};

std::string ReadWholeFile(const std::filesystem::path& path);
// Copies a folder tree (e.g. a fixture trial) into `to`.
void CopyTree(const std::filesystem::path& from, const std::filesystem::path& to);
// Path of a vendored fixture trial: tests/fixtures/smdebug/<name>.
std::filesystem::path FixturePath(std::string_view name);

}  // namespace litmus::testing

#define LITMUS_ASSERT_OK(expr)                                  \
  do {                                                          \
    const ::litmus::Status litmus_s_ = (expr);                  \
    ASSERT_TRUE(litmus_s_.ok()) << litmus_s_.ToString();        \
  } while (0)
#define LITMUS_EXPECT_OK(expr)                                  \
  do {                                                          \
    const ::litmus::Status litmus_s_ = (expr);                  \
    EXPECT_TRUE(litmus_s_.ok()) << litmus_s_.ToString();        \
  } while (0)
// ASSERT that a StatusOr is OK and bind its value: LITMUS_ASSERT_OK_AND_ASSIGN(auto v, F());
#define LITMUS_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  LITMUS_ASSERT_OK_AND_ASSIGN_IMPL_(LITMUS_STATUS_CONCAT_(litmus_sor_, __LINE__), lhs, expr)
#define LITMUS_ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr)    \
  auto tmp = (expr);                                         \
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString();          \
  lhs = std::move(tmp).value()
