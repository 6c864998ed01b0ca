// End-to-end: the real `litmus new-rule` binary. It writes the project's files with the rule's
// names filled in, refuses a non-empty folder and a name that is not a C++ identifier with one
// line and exit code 2, and leaves nothing behind when it refuses. (That the generated project
// builds and its test passes against an install: new_rule_project_test.cmake.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::LitmusBinary;
using testing::ReadWholeFile;
using testing::RunProcess;
using testing::TempDir;

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

std::vector<std::string> FilesUnder(const fs::path& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path().lexically_relative(dir).string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(NewRuleCli, WritesTheProjectWithTheNamesFilledIn) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "proj";
  const auto result = RunProcess({LitmusBinary(), "new-rule", "MyRule", dir.string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(FilesUnder(dir),
            (std::vector<std::string>{"CMakeLists.txt", "my_rule.cc", "test/my_rule_test.cc"}));

  const std::string cmake = ReadWholeFile(dir / "CMakeLists.txt");
  EXPECT_THAT(cmake, HasSubstr("project(my_rule LANGUAGES CXX)"));
  EXPECT_THAT(cmake, HasSubstr("find_package(Litmus 0.1 REQUIRED COMPONENTS sdk writer)"));
  EXPECT_THAT(cmake, HasSubstr("litmus_add_rule_plugin(my_rule SOURCES my_rule.cc)"));
  EXPECT_THAT(cmake, HasSubstr("add_test(NAME my_rule_test"));
  const std::string source = ReadWholeFile(dir / "my_rule.cc");
  EXPECT_THAT(source, HasSubstr("class MyRule : public litmus::Rule {"));
  EXPECT_THAT(source, HasSubstr("LITMUS_RULE(MyRule, \"MyRule\", \"0.1.0\""));
  EXPECT_THAT(source, HasSubstr("LITMUS_RULE_PLUGIN(\"my_rule\""));
  const std::string test = ReadWholeFile(dir / "test/my_rule_test.cc");
  EXPECT_THAT(test, HasSubstr("--rule MyRule"));
  for (const std::string& text : {cmake, source, test}) {
    EXPECT_THAT(text, Not(HasSubstr("@NAME@")));
    EXPECT_THAT(text, Not(HasSubstr("@TARGET@")));
  }
  // What to do next, with the CMake variable that points at the install.
  EXPECT_THAT(result.out, HasSubstr("Created the rule project MyRule in " + dir.string()));
  EXPECT_THAT(result.out, HasSubstr("-DCMAKE_PREFIX_PATH="));
  EXPECT_THAT(result.out, HasSubstr("ctest --test-dir " + dir.string() + "/build"));
  EXPECT_THAT(result.out, HasSubstr("--plugin " + dir.string() + "/build/my_rule.so --rule MyRule"));
}

TEST(NewRuleCli, DefaultFolderIsTheNameInTheCurrentFolder) {
  TempDir tmp;
  const auto result = RunProcess(
      {"/bin/sh", "-c", "cd \"$0\" && exec \"$1\" new-rule HTTPCheck", tmp.str(), LitmusBinary()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(FilesUnder(tmp.path() / "HTTPCheck"),
            (std::vector<std::string>{"CMakeLists.txt", "http_check.cc", "test/http_check_test.cc"}));
}

TEST(NewRuleCli, ANameCMakeReservesGetsASuffix) {
  TempDir tmp;
  const auto result = RunProcess({LitmusBinary(), "new-rule", "Test", (tmp.path() / "t").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(fs::exists(tmp.path() / "t" / "test_rule.cc"));
}

TEST(NewRuleCli, AnEmptyFolderIsFine) {
  TempDir tmp;
  fs::create_directories(tmp.path() / "empty");
  const auto result = RunProcess({LitmusBinary(), "new-rule", "Rule2", (tmp.path() / "empty").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(fs::exists(tmp.path() / "empty" / "rule2.cc"));
}

TEST(NewRuleCli, RefusesAFolderThatIsNotEmpty) {
  TempDir tmp;
  tmp.WriteFile("proj/notes.txt", "mine");
  const auto result = RunProcess({LitmusBinary(), "new-rule", "MyRule", (tmp.path() / "proj").string()});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(Lines(result.err), 1) << result.err;
  EXPECT_THAT(result.err, HasSubstr("is not empty"));
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(FilesUnder(tmp.path() / "proj"), std::vector<std::string>{"notes.txt"});
  EXPECT_EQ(ReadWholeFile(tmp.path() / "proj/notes.txt"), "mine");
}

TEST(NewRuleCli, RefusesAFileAsTheFolder) {
  TempDir tmp;
  tmp.WriteFile("file", "x");
  const auto result = RunProcess({LitmusBinary(), "new-rule", "MyRule", (tmp.path() / "file").string()});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(Lines(result.err), 1) << result.err;
  EXPECT_THAT(result.err, HasSubstr("is not a folder"));
}

TEST(NewRuleCli, RefusesNamesThatAreNotCxxIdentifiers) {
  for (const char* name : {"my-rule", "1Rule", "_Rule", "My Rule", "a__b", "class", "litmus", ""}) {
    SCOPED_TRACE(name);
    TempDir tmp;
    const fs::path dir = tmp.path() / "proj";
    const auto result = RunProcess({LitmusBinary(), "new-rule", name, dir.string()});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(Lines(result.err), 1) << result.err;
    EXPECT_THAT(result.err, HasSubstr("rule name '" + std::string(name) + "'"));
    EXPECT_EQ(result.out, "");
    EXPECT_FALSE(fs::exists(dir));
  }
}

TEST(NewRuleCli, NeedsAName) {
  const auto result = RunProcess({LitmusBinary(), "new-rule"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(Lines(result.err), 1) << result.err;
  EXPECT_THAT(result.err, HasSubstr("NAME"));
}

}  // namespace
}  // namespace litmus
