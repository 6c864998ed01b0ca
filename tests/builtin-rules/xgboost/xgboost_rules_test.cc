// End-to-end tests of the built-in XGBoost rules (FeatureImportanceOverweight, TreeDepth): trials
// shaped like smdebug's XGBoost hook output, written with litmus::writer (GLOBAL mode, one
// boosting round per step: feature_importance/<type>/<feature> float64 (1,) scalars and the tree
// dump trees/Tree, trees/Node, trees/ID, trees/Yes, ...), evaluated by the real `litmus run`
// binary, which finds the built-in plugin without --plugin.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "litmus/writer/writer.h"
#include "support/run_process.h"
#include "support/series_json.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using Json = nlohmann::json;
using testing::ProcessResult;
using testing::TempDir;

const std::vector<std::pair<std::string, std::string>> kFastEnd = {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- Tree dumps as smdebug's parse_tree_model writes them ------------------------------------

// One tree: node id -> (yes child, no child) for every split; every other id below `node_count`
// is a leaf.
struct TreeShape {
  int64_t node_count = 0;
  std::map<int64_t, std::pair<int64_t, int64_t>> splits;
};

// A full binary tree of `depth` levels of splits, numbered level by level as XGBoost's depthwise
// growth does (children of i: 2i+1, 2i+2): 2^(depth+1) - 1 nodes.
TreeShape FullTree(int depth) {
  TreeShape tree;
  tree.node_count = (int64_t{1} << (depth + 1)) - 1;
  for (int64_t i = 0; 2 * i + 2 < tree.node_count; ++i) tree.splits[i] = {2 * i + 1, 2 * i + 2};
  return tree;
}

// A chain of `depth` splits, each with one leaf child and one split child: true depth `depth`,
// only 2 * depth + 1 nodes, so floor(log2(max id + 1)) underestimates it.
TreeShape ChainTree(int depth) {
  TreeShape tree;
  tree.node_count = 2 * depth + 1;
  for (int64_t k = 0; k < depth; ++k) {
    const int64_t self = k == 0 ? 0 : 2 * k - 1;
    tree.splits[self] = {2 * k + 1, 2 * k + 2};
  }
  return tree;
}

// The dump of one round, sorted by Node: the columns of smdebug's xgboost/utils.py
// parse_tree_model with their dtypes (int64, strings "<tree>-<node>" / "nan", float64).
Status SaveTreeDump(writer::Writer& w, int64_t tree_id, const TreeShape& shape, bool with_children = true) {
  const size_t n = static_cast<size_t>(shape.node_count);
  std::vector<int64_t> tree(n, tree_id), node(n);
  std::vector<std::string> id(n), feature(n), yes(n), no(n), missing(n);
  std::vector<double> split(n), gain(n), cover(n);
  const std::string prefix = std::to_string(tree_id) + "-";
  for (size_t i = 0; i < n; ++i) {
    node[i] = static_cast<int64_t>(i);
    id[i] = prefix + std::to_string(i);
    const auto found = shape.splits.find(node[i]);
    const bool leaf = found == shape.splits.end();
    feature[i] = leaf ? std::string("Leaf") : std::string("f").append(std::to_string(i % 3));
    split[i] = leaf ? kNaN : 0.5;
    yes[i] = leaf ? "nan" : prefix + std::to_string(found->second.first);
    no[i] = leaf ? "nan" : prefix + std::to_string(found->second.second);
    missing[i] = yes[i];
    gain[i] = 1.0;
    cover[i] = 10.0;
  }
  const std::initializer_list<int64_t> dims = {shape.node_count};
  LITMUS_RETURN_IF_ERROR(w.SaveTensor("trees/Tree", tree, dims));
  LITMUS_RETURN_IF_ERROR(w.SaveTensor("trees/Node", node, dims));
  LITMUS_RETURN_IF_ERROR(w.SaveStrings("trees/ID", id));
  LITMUS_RETURN_IF_ERROR(w.SaveStrings("trees/Feature", feature));
  LITMUS_RETURN_IF_ERROR(w.SaveTensor("trees/Split", split, dims));
  if (with_children) {
    LITMUS_RETURN_IF_ERROR(w.SaveStrings("trees/Yes", yes));
    LITMUS_RETURN_IF_ERROR(w.SaveStrings("trees/No", no));
    LITMUS_RETURN_IF_ERROR(w.SaveStrings("trees/Missing", missing));
  }
  LITMUS_RETURN_IF_ERROR(w.SaveTensor("trees/Gain", gain, dims));
  return w.SaveTensor("trees/Cover", cover, dims);
}

// ---- XGBoost-shaped trials --------------------------------------------------------------------

// What one boosting round saves. Importances are per type ("weight", "gain"), per feature f0..fN.
struct Round {
  std::map<std::string, std::vector<double>> importance;
  std::optional<TreeShape> tree;
  bool tree_children = true;
};

Round Weights(std::vector<double> weights) {
  Round round;
  round.importance["weight"] = std::move(weights);
  return round;
}
Round Tree(TreeShape shape) {
  Round round;
  round.tree = std::move(shape);
  return round;
}

writer::CollectionConfig Collection(std::string name, std::string include_regex) {
  writer::CollectionConfig collection;
  collection.name = std::move(name);
  collection.include_regex = {std::move(include_regex)};
  return collection;
}

// Writes the rounds as global steps 0, 1, ... and the end marker, with the XGBoost hook's
// collections (metrics, feature_importance, trees) saved every step.
void WriteXgbTrial(const std::filesystem::path& dir, const std::vector<Round>& rounds) {
  writer::WriterOptions options;
  options.save_config = writer::SaveConfig::Every(1);
  options.collections = {Collection("metrics", "^(train|validation)-"),
                         Collection("feature_importance", "^feature_importance/"),
                         Collection("trees", "^trees/")};
  auto opened = writer::Writer::Open(dir.string(), options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  writer::Writer& w = **opened;
  for (size_t step = 0; step < rounds.size(); ++step) {
    LITMUS_ASSERT_OK(w.BeginStep());
    const std::vector<double> rmse = {1.0 / static_cast<double>(step + 1)};
    LITMUS_ASSERT_OK(w.SaveTensor("train-rmse", rmse, {1}));
    for (const auto& [type, values] : rounds[step].importance) {
      for (size_t f = 0; f < values.size(); ++f) {
        const std::vector<double> value = {values[f]};
        LITMUS_ASSERT_OK(w.SaveTensor("feature_importance/" + type + "/f" + std::to_string(f), value, {1}));
      }
    }
    if (rounds[step].tree) {
      LITMUS_ASSERT_OK(SaveTreeDump(w, static_cast<int64_t>(step), *rounds[step].tree, rounds[step].tree_children));
    }
    LITMUS_ASSERT_OK(w.EndStep());
  }
  LITMUS_ASSERT_OK(w.Close());
}

// ---- Running litmus ---------------------------------------------------------------------------

struct LitmusRun {
  ProcessResult process;
  TempDir out;

  std::vector<int64_t> Fired() const {
    std::vector<int64_t> steps;
    std::ifstream in(out.path() / "events.jsonl");
    for (std::string line; std::getline(in, line);) {
      const Json e = Json::parse(line);
      if (e["event"] == "RuleEvaluationConditionMet") steps.push_back(e["step"].get<int64_t>());
    }
    return steps;
  }
  Json Report(const std::string& name) const {
    std::ifstream in(out.path() / "rule-reports" / (name + ".json"));
    return Json::parse(in);
  }
  // rule-reports/<name>.series.json (what the rule watched; support/series_json.h); null if not
  // written.
  Json Series(const std::string& name) const {
    const std::filesystem::path path = out.path() / "rule-reports" / (name + ".series.json");
    if (!std::filesystem::exists(path)) return nullptr;
    std::ifstream in(path);
    return Json::parse(in);
  }
  std::string Failure() const { return testing::ReadWholeFile(out.path() / "failure"); }
};

// `litmus run <args>` with its outputs in a fresh folder. Never --plugin: the built-in plugin is
// found by itself.
std::unique_ptr<LitmusRun> RunLitmus(const std::vector<std::string>& args) {
  auto run = std::make_unique<LitmusRun>();
  std::vector<std::string> argv = {testing::LitmusBinary(), "run", "--output-dir", run->out.str(),
                                   "--message-file", (run->out.path() / "message").string(),
                                   "--failure-file", (run->out.path() / "failure").string(),
                                   "--poll-interval-ms", "20"};
  argv.insert(argv.end(), args.begin(), args.end());
  run->process = testing::RunProcess(argv, kFastEnd);
  return run;
}

// `litmus run --trial <trial> <args>`.
std::unique_ptr<LitmusRun> RunLitmus(const std::filesystem::path& trial, std::vector<std::string> args) {
  args.insert(args.begin(), {"--trial", trial.string()});
  return RunLitmus(args);
}

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

// ---- FeatureImportanceOverweight --------------------------------------------------------------

const std::vector<double> kBalanced = {0.2, 0.2, 0.2, 0.2, 0.2};          // top 3: 0.6
const std::vector<double> kConcentrated = {0.5, 0.3, 0.1, 0.05, 0.05};    // top 3: 0.9

TEST(FeatureImportanceOverweight, FiresAtTheFirstStepWhereTheTopThreeHoldMoreThanThreshold) {
  TempDir trial;
  WriteXgbTrial(trial.path(), {Weights(kBalanced), Weights(kBalanced), Weights(kBalanced),
                               Weights(kConcentrated), Weights(kConcentrated)});
  const auto run = RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight"});
  ASSERT_EQ(run->process.exit_code, 1) << run->process.err;
  EXPECT_EQ(run->Fired(), std::vector<int64_t>{3});
  const Json report = run->Report("FeatureImportanceOverweight");
  EXPECT_EQ(report["RuleTriggered"], 1);
  EXPECT_EQ(report["Violations"], 3);  // the three top features
  EXPECT_EQ(report["Datapoints"], 4);  // steps 0..3
  const Json& details = report["Details"];
  EXPECT_EQ(details["step"], 3);
  EXPECT_NEAR(details["share_sum"].get<double>(), 0.9, 1e-12);
  EXPECT_EQ(details["threshold"], 0.8);
  EXPECT_EQ(details["features"], 5);
  ASSERT_EQ(details["top_features"].size(), 3u);
  EXPECT_EQ(details["top_features"][0][0], "feature_importance/weight/f0");
  EXPECT_NEAR(details["top_features"][0][1].get<double>(), 0.5, 1e-12);
  EXPECT_EQ(details["top_features"][1][0], "feature_importance/weight/f1");
  EXPECT_EQ(details["top_features"][2][0], "feature_importance/weight/f2");
  EXPECT_EQ(report["RuleParameters"],
            "threshold:0.8\nnfeatures:3\ntensor_regex:.*feature_importance/weight\n");
}

TEST(FeatureImportanceOverweight, DoesNotFireOnBalancedImportance) {
  TempDir trial;
  WriteXgbTrial(trial.path(), {Weights(kBalanced), Weights(kBalanced), Weights(kBalanced)});
  const auto run = RunLitmus(trial.path(), {"--rule", "featureimportanceoverweight"});
  ASSERT_EQ(run->process.exit_code, 0) << run->process.err;
  EXPECT_TRUE(run->Fired().empty());
  const Json report = run->Report("FeatureImportanceOverweight");
  EXPECT_EQ(report["RuleTriggered"], 0);
  EXPECT_EQ(report["Violations"], 0);
  EXPECT_EQ(report["Datapoints"], 3);
  EXPECT_EQ(report["Details"]["step"], 2);  // the last evaluated step explains the verdict
  EXPECT_NEAR(report["Details"]["share_sum"].get<double>(), 0.6, 1e-12);
}

TEST(FeatureImportanceOverweight, ThresholdMovesTheFiringStep) {
  TempDir trial;
  // top 3: 0.6, then 0.75, then 0.875 (binary fractions: the sums are exact)
  WriteXgbTrial(trial.path(), {Weights(kBalanced), Weights({0.375, 0.25, 0.125, 0.125, 0.125}),
                               Weights({0.5, 0.25, 0.125, 0.0625, 0.0625})});
  EXPECT_EQ(RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight"})->Fired(), std::vector<int64_t>{2});
  EXPECT_EQ(RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight", "--param", "threshold=0.7"})->Fired(),
            std::vector<int64_t>{1});
  EXPECT_EQ(RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight", "--param", "threshold=0.5"})->Fired(),
            std::vector<int64_t>{0});
  // Strictly greater: a share sum equal to the threshold does not fire.
  const auto equal = RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight", "--param", "threshold=0.875"});
  EXPECT_EQ(equal->process.exit_code, 0) << equal->process.err;
  const auto never = RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight", "--param", "threshold=0.9"});
  EXPECT_EQ(never->process.exit_code, 0) << never->process.err;
  EXPECT_TRUE(never->Fired().empty());
}

TEST(FeatureImportanceOverweight, NFeaturesSetsHowManyTopSharesAreSummed) {
  TempDir trial;
  // top 1: 0.5, top 2: 0.75, top 3: 0.85
  WriteXgbTrial(trial.path(), {Weights({0.5, 0.25, 0.1, 0.08, 0.07})});
  const std::vector<std::pair<std::string, int>> cases = {{"1", 0}, {"2", 0}, {"3", 1}};
  for (const auto& [nfeatures, exit_code] : cases) {
    SCOPED_TRACE("nfeatures " + nfeatures);
    const auto run =
        RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight", "--param", "nfeatures=" + nfeatures});
    EXPECT_EQ(run->process.exit_code, exit_code) << run->process.err;
    EXPECT_EQ(run->Report("FeatureImportanceOverweight")["Details"]["top_features"].size(), std::stoul(nfeatures));
  }
  const auto top1 = RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight", "--param", "nfeatures=1",
                                             "--param", "threshold=0.45"});
  EXPECT_EQ(top1->process.exit_code, 1) << top1->process.err;
  EXPECT_EQ(top1->Report("FeatureImportanceOverweight")["Violations"], 1);
}

TEST(FeatureImportanceOverweight, NFeaturesCoveringEveryFeatureAlwaysFiresAndSaysSoOnce) {
  TempDir trial;
  const std::vector<double> even = {1.0 / 3, 1.0 / 3, 1.0 / 3};
  WriteXgbTrial(trial.path(), {Weights(even), Weights(even), Weights(even)});
  const auto run = RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight", "--keep-going"});
  ASSERT_EQ(run->process.exit_code, 1) << run->process.err;
  EXPECT_EQ(run->Fired(), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(run->Report("FeatureImportanceOverweight")["Details"]["share_sum"], 1.0);  // exactly
  EXPECT_EQ(Occurrences(run->process.err, "nfeatures (3) >= the number of features"), 1u) << run->process.err;
  // threshold 1 can never be exceeded, even then.
  const auto never = RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight", "--param", "threshold=1"});
  EXPECT_EQ(never->process.exit_code, 0) << never->process.err;
}

TEST(FeatureImportanceOverweight, TensorRegexSelectsTheImportanceType) {
  TempDir trial;
  Round round = Weights(kBalanced);
  round.importance["gain"] = kConcentrated;
  WriteXgbTrial(trial.path(), {round, round});
  // Default: weight only, balanced.
  EXPECT_EQ(RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight"})->process.exit_code, 0);
  // "None" means not set: the default regex.
  EXPECT_EQ(RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight", "--param", "tensor_regex=None"})
                ->process.exit_code,
            0);
  const auto gain = RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight", "--param",
                                             "tensor_regex=feature_importance/gain/"});
  ASSERT_EQ(gain->process.exit_code, 1) << gain->process.err;
  EXPECT_EQ(gain->Fired(), std::vector<int64_t>{0});
  EXPECT_EQ(gain->Report("FeatureImportanceOverweight")["Details"]["top_features"][0][0],
            "feature_importance/gain/f0");
  // A regex that selects nothing: never fires.
  const auto none = RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight", "--param",
                                             "tensor_regex=feature_importance/cover/"});
  EXPECT_EQ(none->process.exit_code, 0) << none->process.err;
  EXPECT_EQ(none->Report("FeatureImportanceOverweight")["Details"], Json::object());
}

TEST(FeatureImportanceOverweight, SharesAreRenormalisedOverTheSelectedFeatures) {
  TempDir trial;
  WriteXgbTrial(trial.path(), {Weights({0.3, 0.3, 0.1, 0.1, 0.1, 0.1})});
  // f0..f2 hold 0.7 of the saved importance; among themselves f0 and f1 hold 6/7 = 0.857 > 0.8.
  // Without renormalisation the top 2 would hold 0.6 and the rule would not fire.
  const auto run = RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight", "--param", "nfeatures=2",
                                            "--param", "tensor_regex=feature_importance/weight/f[0-2]$"});
  ASSERT_EQ(run->process.exit_code, 1) << run->process.err;
  const Json details = run->Report("FeatureImportanceOverweight")["Details"];
  EXPECT_NEAR(details["share_sum"].get<double>(), 6.0 / 7.0, 1e-12);
  EXPECT_NEAR(details["top_features"][0][1].get<double>(), 3.0 / 7.0, 1e-12);
  EXPECT_EQ(details["features"], 3);
}

TEST(FeatureImportanceOverweight, ZeroImportanceIsNotADivisionByZero) {
  TempDir trial;
  WriteXgbTrial(trial.path(), {Weights({0, 0, 0, 0}), Weights({0, 0, 0, 0})});
  const auto run = RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight"});
  EXPECT_EQ(run->process.exit_code, 0) << run->process.err;
  EXPECT_TRUE(run->Fired().empty());
}

TEST(FeatureImportanceOverweight, TrialWithoutFeatureImportanceNeverFires) {
  TempDir trial;
  WriteXgbTrial(trial.path(), {Tree(FullTree(2)), Tree(FullTree(3))});
  const auto run = RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight", "--param", "threshold=0"});
  EXPECT_EQ(run->process.exit_code, 0) << run->process.err;
  EXPECT_TRUE(run->Fired().empty());
}

TEST(FeatureImportanceOverweight, InvalidValuesAreConfigurationErrorsNamingTheKey) {
  TempDir trial;
  WriteXgbTrial(trial.path(), {Weights(kConcentrated)});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"threshold=abc", "threshold: expected a number, got 'abc'"},
      {"threshold=1.5", "threshold: expected a fraction between 0 and 1, got '1.5'"},
      {"threshold=-0.1", "threshold: expected a fraction between 0 and 1, got '-0.1'"},
      {"threshold=nan", "threshold: expected a fraction between 0 and 1, got 'nan'"},
      {"nfeatures=0", "nfeatures: expected an integer of at least 1, got '0'"},
      {"nfeatures=2.5", "nfeatures: expected an integer, got '2.5'"},
      {"tensor_regex=feature_importance/(weight", "tensor_regex: invalid regex 'feature_importance/(weight'"},
  };
  for (const auto& [param, message] : cases) {
    SCOPED_TRACE(param);
    const auto run = RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight", "--param", param});
    EXPECT_EQ(run->process.exit_code, 2) << run->process.err;
    EXPECT_NE(run->process.err.find(message), std::string::npos) << run->process.err;
    EXPECT_NE(run->Failure().find("ClientError: "), std::string::npos) << run->Failure();
    EXPECT_NE(run->Failure().find(message), std::string::npos) << run->Failure();
  }
}

// ---- TreeDepth --------------------------------------------------------------------------------

TEST(TreeDepth, FullDepthFourTreeIsNotMet) {
  TempDir trial;
  WriteXgbTrial(trial.path(), {Tree(FullTree(4)), Tree(FullTree(4)), Tree(FullTree(3))});
  const auto run = RunLitmus(trial.path(), {"--rule", "TreeDepth", "--keep-going"});
  ASSERT_EQ(run->process.exit_code, 0) << run->process.err;
  EXPECT_TRUE(run->Fired().empty());
  const Json report = run->Report("TreeDepth");
  EXPECT_EQ(report["Datapoints"], 3);
  EXPECT_EQ(report["RuleParameters"], "depth:4\n");
  // The last evaluated step (a depth-3 tree) explains the verdict.
  EXPECT_EQ(report["Details"]["step"], 2);
  EXPECT_EQ(report["Details"]["computed_depth"], 3);
  EXPECT_EQ(report["Details"]["true_depth"], 3);
  // The full depth-4 tree alone: 31 nodes, ids 0..30, depth 4 by both counts.
  TempDir full;
  WriteXgbTrial(full.path(), {Tree(FullTree(4))});
  const auto one = RunLitmus(full.path(), {"--rule", "TreeDepth"});
  ASSERT_EQ(one->process.exit_code, 0) << one->process.err;
  const Json details = one->Report("TreeDepth")["Details"];
  EXPECT_EQ(details["max_node_id"], 30);
  EXPECT_EQ(details["computed_depth"], 4);
  EXPECT_EQ(details["true_depth"], 4);
  EXPECT_EQ(details["depth"], 4.0);
}

TEST(TreeDepth, DeeperTreeFiresAtItsStep) {
  TempDir trial;
  WriteXgbTrial(trial.path(), {Tree(FullTree(3)), Tree(FullTree(4)), Tree(FullTree(5)), Tree(FullTree(4))});
  const auto run = RunLitmus(trial.path(), {"--rule", "tree_depth"});
  ASSERT_EQ(run->process.exit_code, 1) << run->process.err;
  EXPECT_EQ(run->Fired(), std::vector<int64_t>{2});
  const Json report = run->Report("TreeDepth");
  EXPECT_EQ(report["RuleTriggered"], 1);
  EXPECT_EQ(report["Violations"], 1);
  EXPECT_EQ(report["Details"]["step"], 2);
  EXPECT_EQ(report["Details"]["max_node_id"], 62);
  EXPECT_EQ(report["Details"]["computed_depth"], 5);
  EXPECT_EQ(report["Details"]["true_depth"], 5);
  // --keep-going: Details keep describing the firing, not the quiet step after it.
  const auto all = RunLitmus(trial.path(), {"--rule", "TreeDepth", "--keep-going"});
  EXPECT_EQ(all->Fired(), std::vector<int64_t>{2});
  EXPECT_EQ(all->Report("TreeDepth")["Details"]["step"], 2);
  EXPECT_EQ(all->Report("TreeDepth")["Datapoints"], 4);
}

TEST(TreeDepth, DepthParameterSetsTheLimit) {
  TempDir trial;
  WriteXgbTrial(trial.path(), {Tree(FullTree(2)), Tree(FullTree(3)), Tree(FullTree(5))});
  auto fired_with = [&](const std::string& depth) {
    return RunLitmus(trial.path(), {"--rule", "TreeDepth", "--param", "depth=" + depth})->Fired();
  };
  EXPECT_EQ(fired_with("1"), std::vector<int64_t>{0});
  EXPECT_EQ(fired_with("2"), std::vector<int64_t>{1});
  EXPECT_EQ(fired_with("2.5"), std::vector<int64_t>{1});
  const auto five = RunLitmus(trial.path(), {"--rule", "TreeDepth", "--param", "depth=5"});
  EXPECT_EQ(five->process.exit_code, 0) << five->process.err;
  EXPECT_TRUE(five->Fired().empty());
}

TEST(TreeDepth, UnbalancedTreeFormulaAndTrueDepthDiffer) {
  TempDir trial;
  // A chain of 10 splits: ids 0..20, floor(log2(21)) = 4, true depth 10.
  WriteXgbTrial(trial.path(), {Tree(ChainTree(10))});
  const auto run = RunLitmus(trial.path(), {"--rule", "TreeDepth"});
  ASSERT_EQ(run->process.exit_code, 0) << run->process.err;  // the documented formula decides
  Json details = run->Report("TreeDepth")["Details"];
  EXPECT_EQ(details["max_node_id"], 20);
  EXPECT_EQ(details["computed_depth"], 4);
  EXPECT_EQ(details["true_depth"], 10);
  const auto fired = RunLitmus(trial.path(), {"--rule", "TreeDepth", "--param", "depth=3"});
  ASSERT_EQ(fired->process.exit_code, 1) << fired->process.err;
  details = fired->Report("TreeDepth")["Details"];
  EXPECT_EQ(details["computed_depth"], 4);
  EXPECT_EQ(details["true_depth"], 10);
}

TEST(TreeDepth, WithoutChildColumnsTrueDepthIsNull) {
  TempDir trial;
  Round round = Tree(FullTree(5));
  round.tree_children = false;  // trees/Yes and trees/No not saved
  WriteXgbTrial(trial.path(), {round});
  const auto run = RunLitmus(trial.path(), {"--rule", "TreeDepth"});
  ASSERT_EQ(run->process.exit_code, 1) << run->process.err;
  const Json details = run->Report("TreeDepth")["Details"];
  EXPECT_EQ(details["computed_depth"], 5);
  EXPECT_TRUE(details["true_depth"].is_null()) << details.dump();
}

TEST(TreeDepth, ChildColumnsThatAreNotATreeGiveNoTrueDepth) {
  TempDir trial;
  TreeShape cycle;  // node 0's yes child is node 0 itself
  cycle.node_count = 3;
  cycle.splits[0] = {0, 2};
  WriteXgbTrial(trial.path(), {Tree(cycle), Tree(cycle)});
  const auto run = RunLitmus(trial.path(), {"--rule", "TreeDepth", "--param", "depth=0", "--keep-going"});
  ASSERT_EQ(run->process.exit_code, 1) << run->process.err;  // the formula still decides: 1 > 0
  EXPECT_EQ(run->Fired(), (std::vector<int64_t>{0, 1}));
  const Json details = run->Report("TreeDepth")["Details"];
  EXPECT_EQ(details["computed_depth"], 1);
  EXPECT_TRUE(details["true_depth"].is_null()) << details.dump();
  EXPECT_EQ(Occurrences(run->process.err, "do not describe trees"), 1u) << run->process.err;
}

TEST(TreeDepth, StepsWithoutATreeDumpAreSkipped) {
  TempDir trial;
  // The tree dump only at steps 1 and 3 (the deep one); importance at every step.
  Round deep = Tree(FullTree(6));
  deep.importance["weight"] = kBalanced;
  Round shallow = Tree(FullTree(2));
  WriteXgbTrial(trial.path(), {Weights(kBalanced), shallow, Weights(kBalanced), deep, Weights(kBalanced)});
  const auto run = RunLitmus(trial.path(), {"--rule", "TreeDepth", "--keep-going"});
  ASSERT_EQ(run->process.exit_code, 1) << run->process.err;
  EXPECT_EQ(run->Fired(), std::vector<int64_t>{3});
}

TEST(TreeDepth, TrialWithoutTreesNeverFires) {
  TempDir trial;
  WriteXgbTrial(trial.path(), {Weights(kConcentrated), Weights(kConcentrated)});
  const auto run = RunLitmus(trial.path(), {"--rule", "TreeDepth", "--param", "depth=0"});
  EXPECT_EQ(run->process.exit_code, 0) << run->process.err;
  EXPECT_TRUE(run->Fired().empty());
  EXPECT_EQ(Occurrences(run->process.err, "the trial has no tensor trees/Node"), 1u) << run->process.err;
}

TEST(TreeDepth, InvalidValuesAreConfigurationErrorsNamingTheKey) {
  TempDir trial;
  WriteXgbTrial(trial.path(), {Tree(FullTree(2))});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"depth=deep", "depth: expected a number, got 'deep'"},
      {"depth=-1", "depth: expected a finite number >= 0, got '-1'"},
      {"depth=inf", "depth: expected a finite number >= 0, got 'inf'"},
      {"depth=nan", "depth: expected a finite number >= 0, got 'nan'"},
  };
  for (const auto& [param, message] : cases) {
    SCOPED_TRACE(param);
    const auto run = RunLitmus(trial.path(), {"--rule", "TreeDepth", "--param", param});
    EXPECT_EQ(run->process.exit_code, 2) << run->process.err;
    EXPECT_NE(run->process.err.find(message), std::string::npos) << run->process.err;
    EXPECT_NE(run->Failure().find(message), std::string::npos) << run->Failure();
  }
}

// ---- What the rules watched (ABI 1.3 series, docs/report.md) ---------------------------------

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::Optional;
using ::testing::Pair;
using testing::FindSeries;
using testing::SeriesFirings;
using testing::SeriesPoints;
using testing::SeriesThreshold;

// The series holds the share sum compared at each step, the threshold given, the firing steps'
// values; in a rule worker (the default) and in the runner's process.
TEST(XgboostRulesSeries, FeatureImportanceOverweightPublishesTheTopFeaturesShare) {
  TempDir trial;
  // The top 2 shares: 0.2 + 0.2; 0.375 + 0.25; 0.5 + 0.25; four features of 0.5 renormalised to
  // 0.25 each: 0.25 + 0.25; 0.5 + 0.375 of three; then no importance at all: nothing compared, so
  // nothing published.
  WriteXgbTrial(trial.path(), {Weights(kBalanced), Weights({0.375, 0.25, 0.125, 0.125, 0.125}),
                               Weights({0.5, 0.25, 0.125, 0.0625, 0.0625}), Weights({0.5, 0.5, 0.5, 0.5}),
                               Weights({0.5, 0.375, 0.125}), Weights({0, 0, 0})});
  for (const char* isolation : {"process", "none"}) {
    SCOPED_TRACE(isolation);
    const auto run = RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight", "--param", "nfeatures=2",
                                              "--param", "threshold=0.7", "--keep-going", "--isolation", isolation});
    ASSERT_EQ(run->process.exit_code, 1) << run->process.err;
    EXPECT_EQ(run->Fired(), (std::vector<int64_t>{2, 4}));
    const Json series = run->Series("FeatureImportanceOverweight");
    ASSERT_TRUE(series.is_object()) << run->process.err;
    EXPECT_EQ(series["rule"], "FeatureImportanceOverweight");
    EXPECT_THAT(SeriesPoints(series, "top features share"),
                ElementsAre(Pair(0, DoubleEq(0.4)), Pair(1, DoubleEq(0.625)), Pair(2, DoubleEq(0.75)),
                            Pair(3, DoubleEq(0.5)), Pair(4, DoubleEq(0.875))));
    EXPECT_THAT(SeriesThreshold(series, "top features share", "above"), Optional(DoubleEq(0.7)));
    EXPECT_THAT(SeriesFirings(series, "top features share"),
                ElementsAre(Pair(2, DoubleEq(0.75)), Pair(4, DoubleEq(0.875))));
    const Json* share = FindSeries(series, "top features share", "");
    ASSERT_NE(share, nullptr);
    EXPECT_EQ((*share)["mode"][0], "GLOBAL");
    EXPECT_FALSE(series["recommendations"].empty());
  }
}

// nfeatures covering every feature: the rule compares exactly 1 (not a rounded sum), and so does
// the series.
TEST(XgboostRulesSeries, FeatureImportanceOverweightPublishesTheWholeShareWhenEveryFeatureIsTop) {
  TempDir trial;
  const std::vector<double> even = {1.0 / 3, 1.0 / 3, 1.0 / 3};
  WriteXgbTrial(trial.path(), {Weights(even)});
  const auto run = RunLitmus(trial.path(), {"--rule", "FeatureImportanceOverweight"});
  ASSERT_EQ(run->process.exit_code, 1) << run->process.err;
  const Json series = run->Series("FeatureImportanceOverweight");
  EXPECT_THAT(SeriesPoints(series, "top features share"), ElementsAre(Pair(0, 1.0)));
  EXPECT_THAT(SeriesThreshold(series, "top features share", "above"), Optional(DoubleEq(0.8)));
}

// computed depth at each step with a tree dump, beside the walked true depth when the child
// columns are saved; the threshold is the depth parameter.
TEST(XgboostRulesSeries, TreeDepthPublishesTheComputedDepthAndTheTrueDepth) {
  TempDir trial;
  Round without_children = Tree(FullTree(5));
  without_children.tree_children = false;
  // step 0: full depth 2 (ids 0..6: computed 2, true 2); 1: a chain of 10 splits (ids 0..20:
  // computed 4, true 10); 2: no dump, skipped; 3: full depth 5 without child columns (computed 5,
  // no true depth); 4: full depth 3.
  WriteXgbTrial(trial.path(),
                {Tree(FullTree(2)), Tree(ChainTree(10)), Weights(kBalanced), without_children, Tree(FullTree(3))});
  const auto run = RunLitmus(trial.path(), {"--rule", "TreeDepth", "--param", "depth=3.5", "--keep-going"});
  ASSERT_EQ(run->process.exit_code, 1) << run->process.err;
  EXPECT_EQ(run->Fired(), (std::vector<int64_t>{1, 3}));
  const Json series = run->Series("TreeDepth");
  ASSERT_TRUE(series.is_object()) << run->process.err;
  EXPECT_THAT(SeriesPoints(series, "computed depth"),
              ElementsAre(Pair(0, 2.0), Pair(1, 4.0), Pair(3, 5.0), Pair(4, 3.0)));
  EXPECT_THAT(SeriesPoints(series, "true depth"), ElementsAre(Pair(0, 2.0), Pair(1, 10.0), Pair(4, 3.0)));
  EXPECT_THAT(SeriesThreshold(series, "computed depth", "above"), Optional(3.5));
  EXPECT_FALSE(SeriesThreshold(series, "true depth", "above").has_value()) << "shown, not compared";
  EXPECT_THAT(SeriesFirings(series, "computed depth"), ElementsAre(Pair(1, 4.0), Pair(3, 5.0)));
  EXPECT_THAT(SeriesFirings(series, "true depth"), ElementsAre(Pair(1, 10.0)));
  EXPECT_FALSE(series["recommendations"].empty());
}

// ---- Both rules in one job, as docs/rules/*.md show ---------------------------------------------

TEST(XgboostRules, BothRulesFromYamlOnOneTrial) {
  TempDir trial, config;
  Round round = Tree(FullTree(3));
  round.importance["weight"] = kConcentrated;
  WriteXgbTrial(trial.path(), {round, Tree(FullTree(6))});
  config.WriteFile("job.yaml", "trial: " + trial.str() +
                                   "\nrules:\n"
                                   "  - name: few-features-dominate\n"
                                   "    rule: FeatureImportanceOverweight\n"
                                   "    parameters: {threshold: \"0.8\", nfeatures: \"3\"}\n"
                                   "  - name: trees-too-deep\n"
                                   "    rule: TreeDepth\n"
                                   "    parameters: {depth: \"4\"}\n");
  const auto run = RunLitmus(std::vector<std::string>{"--config", (config.path() / "job.yaml").string()});
  ASSERT_EQ(run->process.exit_code, 1) << run->process.err;
  EXPECT_EQ(run->Report("few-features-dominate")["Details"]["step"], 0);
  EXPECT_EQ(run->Report("trees-too-deep")["Details"]["step"], 1);
  EXPECT_EQ(run->Report("trees-too-deep")["Details"]["computed_depth"], 6);
}

}  // namespace
}  // namespace litmus
