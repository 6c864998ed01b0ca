// BuildJobConfig: merges YAML < environment < command line, key by key, and splits runner keys
// from rule parameters (docs/job-contract.md §3).
#include "run/job_config.h"

#include "plugin/series_store.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "litmus/aws/s3_client.h"
#include "plugin/python_rule_host_path.h"

namespace litmus {
namespace {

constexpr size_t kMaxParameters = 100;
constexpr size_t kMaxKeyLength = 256;
constexpr size_t kMaxValueLength = 256;

// Hyphenated spellings of runner keys (the 2019 preview API) → the underscore form.
std::string CanonicalKey(const std::string& key) {
  static const std::map<std::string, std::string> kAliases = {
      {"start-step", "start_step"},       {"end-step", "end_step"},
      {"logging-level", "logging_level"}, {"other-trials-paths", "other_trials_paths"},
      {"other-trials", "other_trials"},   {"rule-to-invoke", "rule_to_invoke"},
  };
  auto it = kAliases.find(key);
  return it == kAliases.end() ? key : it->second;
}

bool IsOtherTrialKey(const std::string& key, int64_t* index) {
  static constexpr std::string_view kPrefix = "other_trial_";
  if (key.rfind(kPrefix, 0) != 0 || key.size() == kPrefix.size()) return false;
  const std::string digits = key.substr(kPrefix.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  *index = std::stoll(digits);
  return true;
}

std::string Trim(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

std::vector<std::string> SplitPaths(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  for (char c : text + ",") {
    if (c == ',' || c == ';') {
      item = Trim(item);
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else {
      item.push_back(c);
    }
  }
  return out;
}

StatusOr<int64_t> ParseStep(const std::string& key, const std::string& value) {
  const std::string v = Trim(value);
  char* end = nullptr;
  errno = 0;
  const long long parsed = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || end != v.c_str() + v.size() || errno != 0 || parsed < 0) {
    return InvalidArgumentError(key + ": expected a non-negative integer step, got '" + value + "'");
  }
  return static_cast<int64_t>(parsed);
}

void Merge(ParameterMap* into, const ParameterMap& from) {
  for (const auto& [key, value] : from) (*into)[CanonicalKey(key)] = value;
}

ParameterMap Canonical(const ParameterMap& map) {
  ParameterMap out;
  Merge(&out, map);
  return out;
}

Status CheckLimits(const ParameterMap& map, const std::string& origin) {
  if (map.size() > kMaxParameters) {
    return InvalidArgumentError(origin + ": " + std::to_string(map.size()) + " parameters, at most " +
                                std::to_string(kMaxParameters) + " are allowed");
  }
  for (const auto& [key, value] : map) {
    if (key.empty() || key.size() > kMaxKeyLength) {
      return InvalidArgumentError(origin + ": parameter key '" + key.substr(0, 40) + "' must have 1 to 256 characters");
    }
    if (value.size() > kMaxValueLength) {
      return InvalidArgumentError(origin + ": value of parameter " + key + " has " + std::to_string(value.size()) +
                                  " characters, at most 256 are allowed");
    }
  }
  return OkStatus();
}

// ---- YAML -------------------------------------------------------------------------------------

struct YamlRule {
  std::string name;
  std::string rule;
  std::string plugin;
  ParameterMap parameters;
};

struct YamlJob {
  std::optional<std::string> trial, output_dir, message_file, failure_file, logging_level, prefetch_memory;
  std::optional<std::string> isolation, rule_timeout, rule_memory;
  std::optional<int64_t> poll_interval_ms, rule_batch_steps;
  std::optional<bool> keep_going, allow_unknown_params, skip_damaged, fresh;
  std::vector<std::string> plugins, plugin_dirs;
  ParameterMap job_parameters;  // start_step, end_step, other trials given at the top level
  std::vector<YamlRule> rules;
};

std::string Scalar(const YAML::Node& node) { return node.as<std::string>(); }

std::vector<std::string> ScalarList(const YAML::Node& node, const std::string& what) {
  std::vector<std::string> out;
  if (!node) return out;  // absent key
  if (node.IsScalar()) {
    out.push_back(Scalar(node));
  } else if (node.IsSequence()) {
    for (const auto& item : node) out.push_back(Scalar(item));
  } else if (!node.IsNull()) {
    throw std::runtime_error(what + " must be a string or a list of strings");
  }
  return out;
}

ParameterMap StringMap(const YAML::Node& node, const std::string& what) {
  ParameterMap out;
  if (!node || node.IsNull()) return out;
  if (!node.IsMap()) throw std::runtime_error(what + " must be a map of strings");
  for (const auto& kv : node) {
    if (!kv.second.IsScalar()) {
      throw std::runtime_error(what + "." + Scalar(kv.first) + " must be a string, not a list or map");
    }
    out[Scalar(kv.first)] = Scalar(kv.second);
  }
  return out;
}

StatusOr<YamlJob> LoadYaml(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgumentError("cannot read config file " + path + ": " + std::strerror(errno));
  YamlJob job;
  try {
    const YAML::Node root = YAML::Load(in);
    if (!root.IsMap()) return InvalidArgumentError(path + ": expected a YAML map at the top level");
    static const std::set<std::string> kKeys = {
        "trial", "output_dir", "message_file", "failure_file", "logging_level", "poll_interval_ms",
        "prefetch_memory", "keep_going", "plugins", "plugin_dirs", "start_step", "end_step",
        "other_trials", "rules", "DebugRuleConfigurations", "allow_unknown_params", "skip_damaged", "fresh",
        "isolation", "rule_timeout", "rule_memory", "rule_batch_steps"};
    for (const auto& kv : root) {
      const std::string key = Scalar(kv.first);
      if (!kKeys.count(key)) {
        return InvalidArgumentError(path + ": unknown key '" + key + "' (known: trial, rules, output_dir, "
                                    "start_step, end_step, other_trials, plugins, plugin_dirs, logging_level, "
                                    "poll_interval_ms, prefetch_memory, keep_going, allow_unknown_params, "
                                    "skip_damaged, fresh, message_file, failure_file, isolation, rule_timeout, "
                                    "rule_memory, rule_batch_steps)");
      }
    }
    auto opt = [&](const char* key, std::optional<std::string>* out) {
      if (root[key]) *out = Scalar(root[key]);
    };
    opt("trial", &job.trial);
    opt("output_dir", &job.output_dir);
    opt("message_file", &job.message_file);
    opt("failure_file", &job.failure_file);
    opt("logging_level", &job.logging_level);
    opt("prefetch_memory", &job.prefetch_memory);
    opt("isolation", &job.isolation);
    opt("rule_timeout", &job.rule_timeout);
    opt("rule_memory", &job.rule_memory);
    if (root["poll_interval_ms"]) job.poll_interval_ms = root["poll_interval_ms"].as<int64_t>();
    if (root["rule_batch_steps"]) job.rule_batch_steps = root["rule_batch_steps"].as<int64_t>();
    if (root["keep_going"]) job.keep_going = root["keep_going"].as<bool>();
    if (root["allow_unknown_params"]) job.allow_unknown_params = root["allow_unknown_params"].as<bool>();
    if (root["skip_damaged"]) job.skip_damaged = root["skip_damaged"].as<bool>();
    if (root["fresh"]) job.fresh = root["fresh"].as<bool>();
    job.plugins = ScalarList(root["plugins"], "plugins");
    job.plugin_dirs = ScalarList(root["plugin_dirs"], "plugin_dirs");
    if (root["start_step"]) job.job_parameters["start_step"] = Scalar(root["start_step"]);
    if (root["end_step"]) job.job_parameters["end_step"] = Scalar(root["end_step"]);
    if (root["other_trials"]) {
      std::string joined;
      for (const auto& p : ScalarList(root["other_trials"], "other_trials")) joined += (joined.empty() ? "" : ",") + p;
      job.job_parameters["other_trials"] = joined;
    }
    const YAML::Node rules = root["rules"] ? root["rules"] : root["DebugRuleConfigurations"];
    if (rules && !rules.IsSequence()) return InvalidArgumentError(path + ": rules must be a list");
    if (rules) {
      for (const auto& node : rules) {
        if (!node.IsMap()) return InvalidArgumentError(path + ": each rule must be a map");
        YamlRule rule;
        for (const auto& kv : node) {
          const std::string key = Scalar(kv.first);
          if (key == "name" || key == "RuleConfigurationName") {
            rule.name = Scalar(kv.second);
          } else if (key == "rule" || key == "rule_to_invoke") {
            rule.rule = Scalar(kv.second);
          } else if (key == "plugin") {
            rule.plugin = Scalar(kv.second);
          } else if (key == "parameters" || key == "RuleParameters") {
            rule.parameters = StringMap(kv.second, key);
          } else {
            return InvalidArgumentError(path + ": unknown key '" + key +
                                        "' in a rule (known: name, rule, plugin, parameters)");
          }
        }
        job.rules.push_back(std::move(rule));
      }
    }
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    return InvalidArgumentError(path + ": " + what);
  }
  return job;
}

StatusOr<ParameterMap> EnvironmentParameters(const GetEnvFn& getenv) {
  const auto text = getenv("LITMUS_RULE_PARAMETERS");
  if (!text || text->empty()) return ParameterMap{};
  ParameterMap out;
  try {
    const auto json = nlohmann::json::parse(*text);
    if (!json.is_object()) return InvalidArgumentError("LITMUS_RULE_PARAMETERS: expected a JSON object of strings");
    for (const auto& [key, value] : json.items()) {
      if (!value.is_string()) {
        return InvalidArgumentError("LITMUS_RULE_PARAMETERS: value of " + key + " must be a string, got " +
                                    value.dump());
      }
      out[key] = value.get<std::string>();
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(std::string("LITMUS_RULE_PARAMETERS is not valid JSON: ") + e.what());
  }
  return out;
}

// Adds a note once (the same override may be seen for every rule of a config).
void AddNote(std::vector<std::string>* notes, std::string note) {
  if (std::find(notes->begin(), notes->end(), note) == notes->end()) notes->push_back(std::move(note));
}

// --param key=value options, keys canonicalised; a key given twice keeps its last value, with a
// note naming both ("--param threshold given twice ('0.1', then '0.5'); using '0.5'").
StatusOr<ParameterMap> CommandLineParameters(const std::vector<std::string>& params, std::vector<std::string>* notes) {
  ParameterMap out;
  for (const auto& p : params) {
    const auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgumentError("--param " + p + ": expected key=value");
    }
    const std::string key = CanonicalKey(p.substr(0, eq));
    const std::string value = p.substr(eq + 1);
    if (auto it = out.find(key); it != out.end()) {
      AddNote(notes, "--param " + key + " given twice ('" + it->second + "', then '" + value + "'); using '" +
                         value + "'");
    }
    out[key] = value;
  }
  return out;
}

// A command-line option that sets a runner key (--rule, --start-step, --end-step) wins over
// --param of the same key, with a note when the values differ.
void SetFromOption(ParameterMap* cli_params, const std::string& key, const std::string& value,
                   const std::string& option, std::vector<std::string>* notes) {
  if (auto it = cli_params->find(key); it != cli_params->end() && it->second != value) {
    AddNote(notes, "--param " + key + "='" + it->second + "' and " + option + " '" + value + "' both given; using '" +
                       value + "'");
  }
  (*cli_params)[key] = value;
}

// Merges one parameter source over the lower-precedence ones already in `into` (`origins`: the
// source of each key). A key whose value changes between two different sources is a note
// ("parameter threshold set by LITMUS_RULE_PARAMETERS ('0.1') and the command line ('0.5');
// using '0.5'"); within one source (the config file's job-wide defaults and a rule's
// parameters) overriding is by design and silent.
void MergeSource(ParameterMap* into, std::map<std::string, std::string>* origins, const ParameterMap& from,
                 const std::string& source, std::vector<std::string>* notes) {
  for (const auto& [raw_key, value] : from) {
    const std::string key = CanonicalKey(raw_key);
    auto it = into->find(key);
    if (it != into->end() && it->second != value && (*origins)[key] != source) {
      AddNote(notes, "parameter " + key + " set by " + (*origins)[key] + " ('" + it->second + "') and " + source +
                         " ('" + value + "'); using '" + value + "'");
    }
    (*into)[key] = value;
    (*origins)[key] = source;
  }
}

// A rule written in Python (source_s3_uri): python_rule_host.so's PythonRule runs the class
// rule->rule of that file, with the rule's own parameters as one JSON object (keyword arguments).
// With allow_unknown_params, keys its constructor does not take are dropped with a warning. An
// s3:// source is checked here and fetched by the runner at job start (run/rule_source.h).
Status MakePythonRule(const std::string& source, const std::string& origin, bool allow_unknown_params,
                      RuleJobConfig* rule, ParameterMap* params) {
  std::string path = source;
  if (aws::IsS3Uri(source)) {
    auto location = aws::ParseS3Uri(source);
    if (!location.ok()) return location.status().WithContext(origin + ": source_s3_uri " + source);
    if (location->key.empty() || location->key.back() == '/') {
      return InvalidArgumentError(origin + ": source_s3_uri " + source +
                                  ": not an object: give the S3 URI of the Python file (s3://bucket/key.py)");
    }
  } else {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(source, ec)) {
      return InvalidArgumentError(origin + ": source_s3_uri " + source + ": no such Python file");
    }
    path = std::filesystem::absolute(source, ec).lexically_normal().string();
  }
  LITMUS_ASSIGN_OR_RETURN(rule->plugin, PythonRuleHostPath());
  rule->plugin_rule = "PythonRule";
  nlohmann::json own = nlohmann::json::object();
  for (const auto& [key, value] : *params) own[key] = value;
  *params = {{"source_s3_uri", path}, {"rule_to_invoke", rule->rule}, {"rule_parameters", own.dump()}};
  if (allow_unknown_params) (*params)["allow_unknown_params"] = "true";
  return OkStatus();
}

// Splits a merged map into runner settings and the rule's own parameters.
StatusOr<RuleJobConfig> MakeRule(ParameterMap merged, const std::string& name, const std::string& plugin,
                                 const std::vector<std::string>& cli_other_trials, const std::string& origin,
                                 bool allow_unknown_params) {
  LITMUS_RETURN_IF_ERROR(CheckLimits(merged, origin));
  RuleJobConfig rule;
  rule.plugin = plugin;
  std::map<int64_t, std::string> numbered_trials;
  std::vector<std::string> listed_trials;
  std::string python_source;
  for (auto it = merged.begin(); it != merged.end();) {
    const std::string& key = it->first;
    const std::string& value = it->second;
    int64_t index = 0;
    bool consumed = true;
    if (key == "rule_to_invoke") {
      rule.rule = Trim(value);
    } else if (key == "start_step") {
      LITMUS_ASSIGN_OR_RETURN(rule.start_step, ParseStep(key, value));
      consumed = false;  // also offered to a rule that declares it
    } else if (key == "end_step") {
      if (!Trim(value).empty() && Trim(value) != "None") {
        LITMUS_ASSIGN_OR_RETURN(rule.end_step, ParseStep(key, value));
      }
      consumed = false;
    } else if (IsOtherTrialKey(key, &index)) {
      numbered_trials[index] = Trim(value);
    } else if (key == "other_trials" || key == "other_trials_paths") {
      for (auto& p : SplitPaths(value)) listed_trials.push_back(p);
    } else if (key == "action_json") {
      rule.action_json = value;
    } else if (key == "source_s3_uri") {
      python_source = Trim(value);
    } else if (key == "logging_level") {
      // job-wide (handled by the caller)
    } else {
      consumed = false;
    }
    it = consumed ? merged.erase(it) : std::next(it);
  }
  if (!cli_other_trials.empty()) {
    rule.other_trials = cli_other_trials;
  } else {
    for (const auto& [i, path] : numbered_trials) rule.other_trials.push_back(path);
    for (const auto& path : listed_trials) rule.other_trials.push_back(path);
  }
  if (rule.end_step && *rule.end_step < rule.start_step) {
    return InvalidArgumentError(origin + ": end_step " + std::to_string(*rule.end_step) + " is before start_step " +
                                std::to_string(rule.start_step));
  }
  if (!python_source.empty()) {
    LITMUS_RETURN_IF_ERROR(MakePythonRule(python_source, origin, allow_unknown_params, &rule, &merged));
  }
  rule.parameters = std::move(merged);
  rule.configuration_name = name;
  return rule;
}

// Output paths: command line > YAML > the layout's defaults.
void SetOutputPaths(JobConfig* job, const RunCommandLine& cli, const YamlJob& yaml) {
  const auto pick = [](const std::optional<std::string>& a, const std::optional<std::string>& b) {
    return a ? a : b;
  };
  OutputPaths paths = ResolveOutputPaths(job->output_layout, pick(cli.output_dir, yaml.output_dir),
                                         pick(cli.message_file, yaml.message_file),
                                         pick(cli.failure_file, yaml.failure_file));
  job->output_dir = std::move(paths.output_dir);
  job->message_file = std::move(paths.message_file);
  job->failure_file = std::move(paths.failure_file);
  job->temp_dir = std::move(paths.temp_dir);
}

}  // namespace

GetEnvFn ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

StatusOr<double> ParsePositiveSeconds(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(seconds) || !(seconds > 0) || seconds > 1e7) {
    return InvalidArgumentError(what + ": expected a number of seconds > 0 and <= 10000000, got '" + text + "'");
  }
  return seconds;
}

StatusOr<uint64_t> ParseByteSize(const std::string& text) {
  const std::string t = Trim(text);
  char* end = nullptr;
  errno = 0;
  const double number = std::strtod(t.c_str(), &end);
  if (t.empty() || end == t.c_str() || errno != 0 || number < 0) {
    return InvalidArgumentError("expected a size such as 512M or 2G, got '" + text + "'");
  }
  std::string unit(end);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1;
  if (unit == "" || unit == "B") {
    scale = 1;
  } else if (unit == "K" || unit == "KB" || unit == "KIB") {
    scale = 1024.0;
  } else if (unit == "M" || unit == "MB" || unit == "MIB") {
    scale = 1024.0 * 1024;
  } else if (unit == "G" || unit == "GB" || unit == "GIB") {
    scale = 1024.0 * 1024 * 1024;
  } else {
    return InvalidArgumentError("unknown size unit '" + unit + "' in '" + text + "' (use K, M or G)");
  }
  return static_cast<uint64_t>(number * scale);
}

StatusOr<JobConfig> BuildJobConfig(const RunCommandLine& cli, const GetEnvFn& getenv, std::vector<std::string>* notes) {
  JobConfig job;
  YamlJob yaml;
  if (cli.config_file) {
    LITMUS_ASSIGN_OR_RETURN(yaml, LoadYaml(*cli.config_file));
  }
  LITMUS_ASSIGN_OR_RETURN(ParameterMap env_params, EnvironmentParameters(getenv));
  env_params = Canonical(env_params);
  std::vector<std::string> ignored_notes;
  if (notes == nullptr) notes = &ignored_notes;
  LITMUS_ASSIGN_OR_RETURN(ParameterMap cli_params, CommandLineParameters(cli.params, notes));
  if (cli.rule) SetFromOption(&cli_params, "rule_to_invoke", *cli.rule, "--rule", notes);
  if (cli.python_rule) SetFromOption(&cli_params, "source_s3_uri", *cli.python_rule, "--python-rule", notes);
  if (cli.start_step) SetFromOption(&cli_params, "start_step", std::to_string(*cli.start_step), "--start-step", notes);
  if (cli.end_step) SetFromOption(&cli_params, "end_step", std::to_string(*cli.end_step), "--end-step", notes);

  // Job-wide settings.
  if (cli.trial) {
    job.trial = *cli.trial;
  } else if (auto s3 = getenv("S3_PATH"); s3 && !s3->empty()) {
    job.trial = *s3;
  } else if (yaml.trial) {
    job.trial = *yaml.trial;
  } else {
    return InvalidArgumentError("no trial given: use --trial PATH (or the S3_PATH environment variable, or "
                                "trial: in the --config file)");
  }
  LITMUS_ASSIGN_OR_RETURN(job.output_layout, DetectOutputLayout(getenv));
  SetOutputPaths(&job, cli, yaml);
  if (cli.logging_level) {
    job.logging_level = *cli.logging_level;
  } else if (cli_params.count("logging_level")) {
    job.logging_level = cli_params["logging_level"];
  } else if (env_params.count("logging_level")) {
    job.logging_level = env_params["logging_level"];
  } else if (yaml.logging_level) {
    job.logging_level = *yaml.logging_level;
  }
  if (cli.poll_interval_ms) {
    job.poll_interval_ms = *cli.poll_interval_ms;
  } else if (yaml.poll_interval_ms) {
    job.poll_interval_ms = *yaml.poll_interval_ms;
  }
  if (const auto& batch = cli.rule_batch_steps ? cli.rule_batch_steps : yaml.rule_batch_steps) {
    if (*batch < 1 || *batch > static_cast<int64_t>(SeriesStore::kRecentPoints)) {
      return InvalidArgumentError("--rule-batch-steps must be between 1 and " +
                                  std::to_string(SeriesStore::kRecentPoints) + ", got " + std::to_string(*batch));
    }
    job.rule_batch_steps = *batch;
  }
  if (job.poll_interval_ms < 1) {
    return InvalidArgumentError("poll interval must be at least 1 ms, got " + std::to_string(job.poll_interval_ms));
  }
  if (cli.prefetch_memory || yaml.prefetch_memory) {
    auto bytes = ParseByteSize(cli.prefetch_memory ? *cli.prefetch_memory : *yaml.prefetch_memory);
    if (!bytes.ok()) return bytes.status().WithContext("--prefetch-memory");
    job.prefetch_memory_bytes = *bytes;
  }
  job.keep_going = cli.keep_going || yaml.keep_going.value_or(false);
  job.allow_unknown_params = cli.allow_unknown_params || yaml.allow_unknown_params.value_or(false);
  job.skip_damaged = cli.skip_damaged || yaml.skip_damaged.value_or(false);
  job.fresh = cli.fresh || yaml.fresh.value_or(false);
  job.keep_series = !cli.no_series;
  if (const auto& isolation = cli.isolation ? cli.isolation : yaml.isolation) {
    if (*isolation != "process" && *isolation != "none") {
      return InvalidArgumentError("--isolation: expected process or none, got '" + *isolation + "'");
    }
    job.isolate_rules = *isolation == "process";
  }
  if (const auto& timeout = cli.rule_timeout ? cli.rule_timeout : yaml.rule_timeout) {
    LITMUS_ASSIGN_OR_RETURN(job.rule_timeout_s, ParsePositiveSeconds(*timeout, "--rule-timeout"));
  }
  if (const auto& memory = cli.rule_memory ? cli.rule_memory : yaml.rule_memory) {
    if (*memory == "unlimited" || *memory == "0") {
      job.rule_memory_bytes = 0;
    } else {
      auto bytes = ParseByteSize(*memory);
      if (!bytes.ok()) return bytes.status().WithContext("--rule-memory");
      job.rule_memory_bytes = *bytes;
    }
  }
  job.plugin_files = yaml.plugins;
  job.plugin_files.insert(job.plugin_files.end(), cli.plugin_files.begin(), cli.plugin_files.end());
  job.plugin_dirs = yaml.plugin_dirs;
  job.plugin_dirs.insert(job.plugin_dirs.end(), cli.plugin_dirs.begin(), cli.plugin_dirs.end());
  if (auto stop = getenv("SAGEMAKER_ENV_RULE_STOP_SIGNAL_FILE"); stop && !stop->empty()) {
    job.stop_signal_file = *stop;
  }
  job.events = cli.events;
  LITMUS_RETURN_IF_ERROR(
      events::CompleteEventDestinations(&job.events, job.trial, getenv("LITMUS_EVENTS_FLUSH_TIMEOUT_S")));
  if (auto interval = getenv("LITMUS_PROGRESS_INTERVAL_S"); interval && !interval->empty()) {
    LITMUS_ASSIGN_OR_RETURN(job.progress_interval_s, ParsePositiveSeconds(*interval, "LITMUS_PROGRESS_INTERVAL_S"));
  }
  if (auto grace = getenv("rule_stop_grace_time_secs"); grace && !grace->empty()) {
    char* end = nullptr;
    const double g = std::strtod(grace->c_str(), &end);
    if (end == grace->c_str() || g < 0) {
      return InvalidArgumentError("rule_stop_grace_time_secs: expected seconds, got '" + *grace + "'");
    }
    job.stop_grace_s = g;
  }

  // Rules: YAML's (job-level keys < rule parameters) < environment < command line.
  std::vector<YamlRule> yaml_rules = yaml.rules;
  if (yaml_rules.empty()) yaml_rules.emplace_back();
  if (yaml_rules.size() > 1 && (cli.rule || env_params.count("rule_to_invoke"))) {
    return InvalidArgumentError("--rule / rule_to_invoke cannot be combined with a --config of " +
                                std::to_string(yaml_rules.size()) + " rules");
  }
  std::set<std::string> names;
  for (const YamlRule& yr : yaml_rules) {
    ParameterMap merged;
    std::map<std::string, std::string> origins;
    ParameterMap from_yaml = yr.parameters;
    if (!yr.rule.empty()) from_yaml["rule_to_invoke"] = yr.rule;
    MergeSource(&merged, &origins, yaml.job_parameters, "the config file", notes);
    MergeSource(&merged, &origins, from_yaml, "the config file", notes);
    MergeSource(&merged, &origins, env_params, "LITMUS_RULE_PARAMETERS", notes);
    MergeSource(&merged, &origins, cli_params, "the command line", notes);
    const std::string origin = yr.name.empty() ? std::string("rule parameters") : "rule " + yr.name;
    LITMUS_ASSIGN_OR_RETURN(RuleJobConfig rule,
                            MakeRule(std::move(merged), yr.name, cli.plugin.value_or(yr.plugin), cli.other_trials, origin,
                                     job.allow_unknown_params));
    if (rule.rule.empty()) {
      return InvalidArgumentError("no rule given: use --rule NAME (or rule_to_invoke in LITMUS_RULE_PARAMETERS, "
                                  "or rules: in the --config file)");
    }
    const std::string effective_name = rule.configuration_name.empty() ? rule.rule : rule.configuration_name;
    if (!names.insert(effective_name).second) {
      return InvalidArgumentError("two rules are named " + effective_name +
                                  ": give each a distinct name (RuleConfigurationName)");
    }
    job.rules.push_back(std::move(rule));
  }
  return job;
}

JobConfig FallbackJobConfig(const RunCommandLine& cli, const GetEnvFn& getenv) {
  JobConfig job;
  YamlJob yaml;
  if (cli.config_file) {
    if (auto loaded = LoadYaml(*cli.config_file); loaded.ok()) yaml = std::move(loaded).value();
  }
  const auto layout = DetectOutputLayout(getenv);
  job.output_layout = layout.ok() ? *layout : OutputLayout::kLocal;
  SetOutputPaths(&job, cli, yaml);
  job.plugin_files = yaml.plugins;
  job.plugin_files.insert(job.plugin_files.end(), cli.plugin_files.begin(), cli.plugin_files.end());
  job.plugin_dirs = yaml.plugin_dirs;
  job.plugin_dirs.insert(job.plugin_dirs.end(), cli.plugin_dirs.begin(), cli.plugin_dirs.end());
  std::optional<std::string> env_rule;
  if (auto env = EnvironmentParameters(getenv); env.ok()) {
    const ParameterMap params = Canonical(*env);
    if (auto it = params.find("rule_to_invoke"); it != params.end()) env_rule = Trim(it->second);
  }
  RuleJobConfig rule;
  rule.plugin = cli.plugin.value_or("");
  if (cli.rule || env_rule) {
    rule.rule = cli.rule ? Trim(*cli.rule) : *env_rule;
    if (yaml.rules.size() == 1) rule.configuration_name = yaml.rules.front().name;
    job.rules.push_back(rule);
    return job;
  }
  for (const YamlRule& yr : yaml.rules) {
    rule.configuration_name = yr.name;
    rule.rule = Trim(yr.rule);
    if (auto it = yr.parameters.find("rule_to_invoke"); rule.rule.empty() && it != yr.parameters.end()) {
      rule.rule = Trim(it->second);
    }
    if (!rule.rule.empty() || !rule.configuration_name.empty()) job.rules.push_back(rule);
  }
  return job;
}

}  // namespace litmus
