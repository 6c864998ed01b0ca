// PluginRegistry: loading raw-C test plugins (plugins/test_plugin.c), the checks of the entry's
// table, search folders, rule lookup by name, and the default search path.
#include "plugin/plugin_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "plugin/name_suggestion.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;

std::vector<std::string> Names(const PluginRegistry& registry) {
  std::vector<std::string> out;
  for (const LoadedRule* rule : registry.rules()) out.push_back(rule->name);
  return out;
}

// Copies a plugin into `dir` under `name` (a different file: dlopen loads it separately).
std::string CopyPlugin(const char* plugin, const fs::path& dir, const std::string& name) {
  const fs::path to = dir / name;
  fs::copy_file(plugin, to, fs::copy_options::overwrite_existing);
  return to.string();
}

TEST(PluginLoader, GoodPluginLoadsAndListsItsRules) {
  PluginRegistry registry;
  LITMUS_ASSERT_OK(registry.LoadFile(LITMUS_TEST_PLUGIN_GOOD));
  EXPECT_THAT(Names(registry), ::testing::ElementsAre("NLPSequenceRatio", "StalledTrainingRule", "VanishingGradient"));

  LITMUS_ASSERT_OK_AND_ASSIGN(const LoadedRule* rule, registry.FindRule("VanishingGradient"));
  EXPECT_EQ(rule->name, "VanishingGradient");
  EXPECT_EQ(rule->version, "1.2.3");
  EXPECT_EQ(rule->description, "test rule VanishingGradient");
  EXPECT_EQ(rule->plugin_name, "loader_good");
  EXPECT_EQ(rule->plugin_path, fs::path(LITMUS_TEST_PLUGIN_GOOD).lexically_normal().string());
  ASSERT_NE(rule->descriptor, nullptr);
  ASSERT_EQ(rule->params.size(), 3u);
  EXPECT_EQ(rule->params[0].name, "threshold");
  EXPECT_EQ(rule->params[0].type, "float");
  EXPECT_EQ(rule->params[0].default_value, "0.0000001");
  EXPECT_EQ(rule->params[0].description, "limit for the gradient");
  EXPECT_FALSE(rule->params[0].required);
  EXPECT_EQ(rule->params[2].name, "behavior");

  LITMUS_ASSERT_OK_AND_ASSIGN(const LoadedRule* stalled, registry.FindRule("StalledTrainingRule"));
  ASSERT_EQ(stalled->params.size(), 1u);
  EXPECT_TRUE(stalled->params[0].required);
  EXPECT_EQ(stalled->params[0].type, "int");
}

// ABI 1.1 appended on_poll to the rule descriptor: a plugin built against the 1.0 header (104-byte
// descriptors, no on_poll) must still load, with the host stepping by the plugin's stride and
// never reading on_poll.
TEST(PluginLoader, AnAbi10PluginStillLoads) {
  PluginRegistry registry;
  LITMUS_ASSERT_OK(registry.LoadFile(LITMUS_TEST_PLUGIN_ABI_1_0));
  EXPECT_THAT(Names(registry), ::testing::ElementsAre("OldFireAtStep", "OldNeverFires"));
  LITMUS_ASSERT_OK_AND_ASSIGN(const LoadedRule* rule, registry.FindRule("OldFireAtStep"));
  EXPECT_EQ(rule->descriptor->struct_size, offsetof(litmus_rule_descriptor_t, on_poll));
  EXPECT_EQ(rule->on_poll, nullptr);
  ASSERT_EQ(rule->params.size(), 1u);
  EXPECT_EQ(rule->params[0].name, "fire_at_step");
  // A 1.1 plugin's rule keeps its on_poll, and one without it has none.
  LITMUS_ASSERT_OK(registry.LoadFile(LITMUS_TEST_RULES_PLUGIN));
  LITMUS_ASSERT_OK_AND_ASSIGN(const LoadedRule* polls, registry.FindRule("PollFires"));
  EXPECT_EQ(polls->descriptor->struct_size, sizeof(litmus_rule_descriptor_t));
  EXPECT_NE(polls->on_poll, nullptr);
  LITMUS_ASSERT_OK_AND_ASSIGN(const LoadedRule* never, registry.FindRule("NeverFires"));
  EXPECT_EQ(never->on_poll, nullptr);
  // ABI 1.2 flags: read only where the descriptor has them (the 1.0 plugin's rules keep state).
  EXPECT_FALSE(rule->stateless);
}

TEST(PluginLoader, StatelessFlagSince12) {
  PluginRegistry registry;
  LITMUS_ASSERT_OK(registry.LoadFile(LITMUS_TEST_PLUGIN_GOOD));
  LITMUS_ASSERT_OK_AND_ASSIGN(const LoadedRule* stateless, registry.FindRule("NLPSequenceRatio"));
  EXPECT_TRUE(stateless->stateless);
  LITMUS_ASSERT_OK_AND_ASSIGN(const LoadedRule* stateful, registry.FindRule("VanishingGradient"));
  EXPECT_FALSE(stateful->stateless);
}

TEST(PluginLoader, LoadingTheSameFileTwiceIsANoOp) {
  TempDir dir;
  const fs::path link = dir.path() / "link.so";
  fs::create_symlink(LITMUS_TEST_PLUGIN_GOOD, link);
  PluginRegistry registry;
  LITMUS_ASSERT_OK(registry.LoadFile(LITMUS_TEST_PLUGIN_GOOD));
  LITMUS_ASSERT_OK(registry.LoadFile(LITMUS_TEST_PLUGIN_GOOD));
  LITMUS_ASSERT_OK(registry.LoadFile(link.string()));  // another path of the same file
  EXPECT_EQ(registry.rules().size(), 3u);
  LITMUS_EXPECT_OK(registry.FindRule("VanishingGradient").status());  // not ambiguous with itself

  // A second registry of the same process sees the same (already loaded) plugin.
  PluginRegistry other;
  LITMUS_ASSERT_OK(other.LoadFile(LITMUS_TEST_PLUGIN_GOOD));
  EXPECT_EQ(other.rules().size(), 3u);
  EXPECT_EQ(*other.FindRule("VanishingGradient"), *registry.FindRule("VanishingGradient"));
}

TEST(PluginLoader, RelativePathIsMadeAbsolute) {
  const fs::path plugin(LITMUS_TEST_PLUGIN_GOOD);
  const fs::path saved = fs::current_path();
  fs::current_path(plugin.parent_path());
  PluginRegistry registry;
  const Status status = registry.LoadFile(plugin.filename().string());
  fs::current_path(saved);
  LITMUS_ASSERT_OK(status);
  EXPECT_EQ(registry.rules().front()->plugin_path, plugin.lexically_normal().string());
}

void ExpectLoadError(const char* plugin, const std::string& must_contain) {
  PluginRegistry registry;
  const Status status = registry.LoadFile(plugin);
  ASSERT_FALSE(status.ok()) << plugin;
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_THAT(status.message(), HasSubstr("plugin " + fs::path(plugin).lexically_normal().string()));
  EXPECT_THAT(status.message(), HasSubstr(must_contain));
  EXPECT_EQ(status.message().find('\n'), std::string::npos) << "one line";
  EXPECT_TRUE(registry.rules().empty());
  // The refusal is remembered: asking again gives the same answer (the entry is not re-run).
  EXPECT_EQ(registry.LoadFile(plugin), status);
}

TEST(PluginLoader, MissingEntrySymbol) {
  ExpectLoadError(LITMUS_TEST_PLUGIN_NO_ENTRY, ": no symbol litmus_plugin_entry_v1 (not a litmus plugin?)");
}

TEST(PluginLoader, WrongMajor) { ExpectLoadError(LITMUS_TEST_PLUGIN_MAJOR, " needs ABI 2.3, litmus provides 1.3"); }

TEST(PluginLoader, NewerMinor) { ExpectLoadError(LITMUS_TEST_PLUGIN_MINOR, " needs ABI 1.99, litmus provides 1.3"); }

TEST(PluginLoader, NullCreate) {
  ExpectLoadError(LITMUS_TEST_PLUGIN_NULL_CREATE, "rule #1 (NoCreate): create is NULL");
}

TEST(PluginLoader, EmptyRuleName) { ExpectLoadError(LITMUS_TEST_PLUGIN_EMPTY_NAME, "rule #0 has an empty name"); }

TEST(PluginLoader, ExtraExportsAreRefused) {
  // Static functions of the C file stay local even with default visibility; the exported one is
  // the extra.
  ExpectLoadError(LITMUS_TEST_PLUGIN_EXTRA_EXPORT,
                  " exports symbols other than litmus_plugin_entry_v1: litmus_test_extra_symbol (build it with "
                  "litmus_add_rule_plugin");
}

TEST(PluginLoader, EntryFailureCarriesItsText) {
  ExpectLoadError(LITMUS_TEST_PLUGIN_ENTRY_FAILS,
                  "litmus_plugin_entry_v1 failed with LITMUS_INVALID_CONFIG: entry refuses on purpose");
}

TEST(PluginLoader, MissingFileNotSharedObjectAndFolder) {
  TempDir dir;
  PluginRegistry registry;
  const std::string missing = (dir.path() / "libnothere.so").string();
  Status status = registry.LoadFile(missing);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "plugin " + missing + ": no such file");

  dir.WriteFile("notes.txt", "not a shared object\n");
  const std::string text = (dir.path() / "notes.txt").string();
  status = registry.LoadFile(text);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("plugin " + text + ": cannot load: "));
  EXPECT_THAT(status.message(), HasSubstr("notes.txt"));  // dlerror() names the file too

  status = registry.LoadFile(dir.str());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("is a folder, not a plugin file"));
  EXPECT_TRUE(registry.rules().empty());
}

TEST(PluginLoader, FindRuleIsCaseInsensitiveAndAcceptsSnakeCase) {
  PluginRegistry registry;
  LITMUS_ASSERT_OK(registry.LoadFile(LITMUS_TEST_PLUGIN_GOOD));
  for (const char* name :
       {"VanishingGradient", "vanishinggradient", "VANISHINGGRADIENT", "vanishing_gradient", "Vanishing_Gradient"}) {
    LITMUS_ASSERT_OK_AND_ASSIGN(const LoadedRule* rule, registry.FindRule(name));
    EXPECT_EQ(rule->name, "VanishingGradient") << name;
  }
  LITMUS_ASSERT_OK_AND_ASSIGN(const LoadedRule* stalled, registry.FindRule("stalled_training_rule"));
  EXPECT_EQ(stalled->name, "StalledTrainingRule");
  LITMUS_ASSERT_OK_AND_ASSIGN(const LoadedRule* nlp, registry.FindRule("nlp_sequence_ratio"));
  EXPECT_EQ(nlp->name, "NLPSequenceRatio");

  // Near misses get a hint (edit distance <= 2 or a prefix, against class and snake_case names).
  for (const char* wrong : {"vanishing", "vanishing__gradient", "vanishinggradient_", "VanishingGradiant",
                            "vanishing_gradients", "VanishingGradientRule"}) {
    const auto missing = registry.FindRule(wrong);
    ASSERT_FALSE(missing.ok()) << wrong;
    EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
    EXPECT_EQ(missing.status().message(), "unknown rule '" + std::string(wrong) +
                                              "'; did you mean VanishingGradient? available rules: "
                                              "NLPSequenceRatio, StalledTrainingRule, VanishingGradient");
  }
  LITMUS_ASSERT_OK(registry.FindRule("nlp_sequence_ratio").status());
  EXPECT_THAT(registry.FindRule("nlp_sequense_ratio").status().message(), HasSubstr("did you mean NLPSequenceRatio?"));
  EXPECT_THAT(registry.FindRule("stalled").status().message(), HasSubstr("did you mean StalledTrainingRule?"));
  for (const char* far : {"", "Nope", "xy", "Gradient"}) {
    EXPECT_EQ(registry.FindRule(far).status().message(),
              "unknown rule '" + std::string(far) +
                  "'; available rules: NLPSequenceRatio, StalledTrainingRule, VanishingGradient")
        << far;
  }
}

TEST(PluginLoader, NoPluginsAtAllSaysWhereItLooked) {
  TempDir dir;
  PluginRegistry registry;
  LITMUS_ASSERT_OK(registry.LoadDirectory(dir.str()));
  const auto missing = registry.FindRule("VanishingGradient");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("no rule plugins were found (searched: " + dir.str() + ")"));
}

TEST(PluginLoader, SameRuleInTwoPluginsIsAmbiguous) {
  PluginRegistry registry;
  LITMUS_ASSERT_OK(registry.LoadFile(LITMUS_TEST_PLUGIN_GOOD));
  LITMUS_ASSERT_OK(registry.LoadFile(LITMUS_TEST_PLUGIN_DUP));
  EXPECT_EQ(registry.rules().size(), 4u);  // both are listed
  for (const char* name : {"VanishingGradient", "vanishing_gradient"}) {
    const auto found = registry.FindRule(name);
    ASSERT_FALSE(found.ok());
    EXPECT_EQ(found.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(found.status().message(), HasSubstr("is ambiguous"));
    EXPECT_THAT(found.status().message(), HasSubstr(fs::path(LITMUS_TEST_PLUGIN_GOOD).lexically_normal().string()));
    EXPECT_THAT(found.status().message(), HasSubstr(fs::path(LITMUS_TEST_PLUGIN_DUP).lexically_normal().string()));
  }
  LITMUS_EXPECT_OK(registry.FindRule("StalledTrainingRule").status());  // unique names still resolve
}

TEST(PluginLoader, ExplicitPluginsAndEarlierFoldersShadowLaterFolders) {
  TempDir first, second;
  CopyPlugin(LITMUS_TEST_PLUGIN_DUP, first.path(), "dup.so");
  CopyPlugin(LITMUS_TEST_PLUGIN_GOOD, second.path(), "good.so");
  {
    PluginRegistry registry;
    LITMUS_ASSERT_OK(registry.LoadFile(LITMUS_TEST_PLUGIN_GOOD));
    LITMUS_ASSERT_OK(registry.LoadDirectory(first.str()));
    LITMUS_ASSERT_OK_AND_ASSIGN(const LoadedRule* rule, registry.FindRule("VanishingGradient"));
    EXPECT_EQ(rule->plugin_name, "loader_good");
  }
  {
    PluginRegistry registry;
    LITMUS_ASSERT_OK(registry.LoadDirectory(first.str()));
    LITMUS_ASSERT_OK(registry.LoadDirectory(second.str()));
    LITMUS_ASSERT_OK_AND_ASSIGN(const LoadedRule* rule, registry.FindRule("VanishingGradient"));
    EXPECT_EQ(rule->plugin_name, "loader_dup");
    EXPECT_EQ(rule->plugin_path, (first.path() / "dup.so").string());
    EXPECT_THAT(registry.searched_directories(), ::testing::ElementsAre(first.str(), second.str()));
  }
  {
    // Two plugins of one folder: same precedence, ambiguous.
    CopyPlugin(LITMUS_TEST_PLUGIN_GOOD, first.path(), "good.so");
    PluginRegistry registry;
    LITMUS_ASSERT_OK(registry.LoadDirectory(first.str()));
    EXPECT_THAT(registry.FindRule("VanishingGradient").status().message(), HasSubstr("is ambiguous"));
  }
}

TEST(PluginLoader, SearchFolderSkipsNonPluginsWithAWarning) {
  TempDir dir;
  CopyPlugin(LITMUS_TEST_PLUGIN_GOOD, dir.path(), "b_good.so");
  CopyPlugin(LITMUS_TEST_PLUGIN_NO_ENTRY, dir.path(), "a_no_entry.so");
  dir.WriteFile("c_text.so", "not ELF\n");
  dir.WriteFile("README.txt", "ignored: not *.so\n");
  fs::create_directory(dir.path() / "sub.so");  // a folder is not a file
  PluginRegistry registry;
  LITMUS_ASSERT_OK(registry.LoadDirectory(dir.str()));
  EXPECT_EQ(registry.rules().size(), 3u);
  ASSERT_EQ(registry.warnings().size(), 2u);
  EXPECT_THAT(registry.warnings()[0], HasSubstr("a_no_entry.so: no symbol litmus_plugin_entry_v1"));
  EXPECT_THAT(registry.warnings()[0], HasSubstr("(skipped)"));
  EXPECT_THAT(registry.warnings()[1], HasSubstr("c_text.so: cannot load: "));
  // Given explicitly, the same non-plugin is an error.
  EXPECT_FALSE(registry.LoadFile((dir.path() / "a_no_entry.so").string()).ok());
}

TEST(PluginLoader, SearchFolderWithABrokenLitmusPluginFails) {
  TempDir dir;
  CopyPlugin(LITMUS_TEST_PLUGIN_GOOD, dir.path(), "a_good.so");
  const std::string minor = CopyPlugin(LITMUS_TEST_PLUGIN_MINOR, dir.path(), "b_minor.so");
  PluginRegistry registry;
  const Status status = registry.LoadDirectory(dir.str());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "plugin " + minor + " needs ABI 1.99, litmus provides 1.3");
}

TEST(PluginLoader, MissingFolder) {
  TempDir dir;
  const std::string missing = (dir.path() / "nothere").string();
  PluginRegistry registry;
  LITMUS_EXPECT_OK(registry.LoadDirectory(missing));  // search paths may list absent folders
  const Status status = registry.LoadDirectory(missing, /*must_exist=*/true);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "plugin folder " + missing + " does not exist");
}

TEST(PluginLoader, LoadPluginsRequiresExplicitFoldersToExist) {
  TempDir dir;
  PluginRegistry registry;
  const Status status = LoadPlugins(registry, {}, {(dir.path() / "nothere").string()});
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  PluginRegistry ok;
  CopyPlugin(LITMUS_TEST_PLUGIN_GOOD, dir.path(), "good.so");
  LITMUS_ASSERT_OK(LoadPlugins(ok, {LITMUS_TEST_PLUGIN_DUP}, {dir.str()}));
  // The explicit file wins over the folder.
  EXPECT_EQ((*ok.FindRule("VanishingGradient"))->plugin_name, "loader_dup");
  EXPECT_EQ(ok.searched_directories().front(), dir.str());
}

TEST(PluginLoader, SearchPathOrder) {
  ASSERT_EQ(setenv("LITMUS_PLUGIN_PATH", "/env/one::/env/two/:/explicit", 1), 0);
  const std::vector<std::string> path = PluginSearchPath({"/explicit", "relative/dir"});
  unsetenv("LITMUS_PLUGIN_PATH");
  const std::string exe_dir = fs::read_symlink("/proc/self/exe").parent_path().string();
  ASSERT_GE(path.size(), 5u);
  EXPECT_EQ(path[0], "/explicit");
  EXPECT_EQ(path[1], (fs::current_path() / "relative/dir").string());
  EXPECT_EQ(path[2], "/env/one");
  EXPECT_EQ(path[3], "/env/two");
  EXPECT_EQ(path[4], (fs::path(exe_dir).parent_path() / LITMUS_INSTALL_PLUGIN_SUBDIR).string());
  // This test runs from the build tree: the build tree's built-in rules come last.
  EXPECT_EQ(path.back().substr(path.back().size() - std::string("/builtin-rules").size()), "/builtin-rules");
}

TEST(PluginLoader, SnakeCase) {
  EXPECT_EQ(RuleNameToSnakeCase("VanishingGradient"), "vanishing_gradient");
  EXPECT_EQ(RuleNameToSnakeCase("StalledTrainingRule"), "stalled_training_rule");
  EXPECT_EQ(RuleNameToSnakeCase("NLPSequenceRatio"), "nlp_sequence_ratio");
  EXPECT_EQ(RuleNameToSnakeCase("DeadRelu"), "dead_relu");
  EXPECT_EQ(RuleNameToSnakeCase("AllZero"), "all_zero");
  EXPECT_EQ(RuleNameToSnakeCase("Confusion"), "confusion");
  EXPECT_EQ(RuleNameToSnakeCase("Layer2Norm"), "layer2_norm");
  EXPECT_EQ(RuleNameToSnakeCase("already_snake"), "already_snake");
}

// SuggestName: the "did you mean" matcher used for rule names and parameter keys.
TEST(NameSuggestion, EditsAndPrefixes) {
  const std::vector<NameCandidate> keys = {{"threshold", "threshold"}, {"epsilon", "epsilon"},
                                           {"tensor_regex", "tensor_regex"}, {"depth", "depth"}};
  EXPECT_EQ(SuggestName("thresold", keys), "threshold");
  EXPECT_EQ(SuggestName("THRESHOLD", keys), "threshold");   // case only
  EXPECT_EQ(SuggestName("thershold", keys), "threshold");   // two edits
  EXPECT_EQ(SuggestName("tensor", keys), "tensor_regex");   // prefix
  EXPECT_EQ(SuggestName("depth_limit", keys), "depth");     // the known key is a prefix
  EXPECT_EQ(SuggestName("dept", keys), "depth");
  EXPECT_EQ(SuggestName("thrxxxxld", keys), std::nullopt);  // three edits
  EXPECT_EQ(SuggestName("x", keys), std::nullopt);          // too short for two edits to mean anything
  EXPECT_EQ(SuggestName("de", keys), std::nullopt);         // too short a prefix
  EXPECT_EQ(SuggestName("", keys), std::nullopt);
  EXPECT_EQ(SuggestName("threshold", {}), std::nullopt);
  // Fewer edits win over a prefix.
  EXPECT_EQ(SuggestName("eps", {{"epsilon", "epsilon"}, {"ups", "ups"}}), "ups");
  EXPECT_EQ(EditDistance("kitten", "Sitting"), 3u);
}

}  // namespace
}  // namespace litmus
