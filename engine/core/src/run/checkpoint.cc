// JobCheckpoint: JSON form, atomic durable writes, and recovery of what events.jsonl already holds.
#include "run/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace litmus {
namespace {

using Json = nlohmann::ordered_json;

// write(2) all of `data`, then fsync.
Status WriteAllAndSync(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoToStatus(errno, "cannot write " + path);
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) return ErrnoToStatus(errno, "cannot sync " + path);
  return OkStatus();
}

Json ToJson(const RuleCheckpoint& r) {
  Json j;
  j["name"] = r.name;
  j["fingerprint"] = r.fingerprint;
  j["cursor"] = r.cursor;
  j["last_step"] = r.last_step;
  j["datapoints"] = r.datapoints;
  j["fired_steps"] = r.fired_steps;
  j["done"] = r.done;
  j["status"] = r.status;
  j["details"] = r.details;
  j["exit_code"] = r.exit_code;
  j["violations"] = r.violations;
  j["details_json"] = r.details_json;
  return j;
}

RuleCheckpoint RuleFromJson(const Json& j) {
  RuleCheckpoint r;
  r.name = j.at("name").get<std::string>();
  r.fingerprint = j.at("fingerprint").get<std::string>();
  r.cursor = j.at("cursor").get<int64_t>();
  r.last_step = j.at("last_step").get<int64_t>();
  r.datapoints = j.at("datapoints").get<int64_t>();
  r.fired_steps = j.at("fired_steps").get<std::vector<int64_t>>();
  r.done = j.at("done").get<bool>();
  r.status = j.at("status").get<std::string>();
  r.details = j.at("details").get<std::string>();
  r.exit_code = j.at("exit_code").get<int>();
  r.violations = j.at("violations").get<int64_t>();
  r.details_json = j.at("details_json").get<std::map<std::string, std::string>>();
  return r;
}

}  // namespace

Status WriteCheckpoint(const std::string& output_dir, const JobCheckpoint& checkpoint) {
  Json j;
  j["version"] = JobCheckpoint::kVersion;
  j["trial"] = checkpoint.trial;
  j["restarts"] = checkpoint.restarts;
  j["finished"] = checkpoint.finished;
  Json rules = Json::array();
  for (const RuleCheckpoint& r : checkpoint.rules) rules.push_back(ToJson(r));
  j["rules"] = std::move(rules);
  const std::string text = j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";

  const std::string path = (std::filesystem::path(output_dir) / kCheckpointFileName).string();
  // (Hidden: an output folder is published as it is, SageMaker uploads it.)
  // (Appended piece by piece: GCC 12's -Wrestrict misfires on "." + std::string.)
  std::string tmp_name = ".";
  tmp_name += kCheckpointFileName;
  tmp_name += '.';
  tmp_name += std::to_string(getpid());
  tmp_name += ".tmp";
  const std::string tmp = (std::filesystem::path(output_dir) / tmp_name).string();
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoToStatus(errno, "cannot write checkpoint " + tmp);
  Status written = WriteAllAndSync(fd, text, tmp);
  if (close(fd) != 0 && written.ok()) written = ErrnoToStatus(errno, "cannot write checkpoint " + tmp);
  if (!written.ok()) {
    unlink(tmp.c_str());
    return written;
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    unlink(tmp.c_str());
    return ErrnoToStatus(error, "cannot write checkpoint " + path);
  }
  // The rename is durable once the folder is synced.
  const int dir = open(output_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return ErrnoToStatus(errno, "cannot sync folder " + output_dir);
  const int synced = fsync(dir);
  const int error = errno;
  close(dir);
  if (synced != 0) return ErrnoToStatus(error, "cannot sync folder " + output_dir);
  return OkStatus();
}

StatusOr<std::optional<JobCheckpoint>> ReadCheckpoint(const std::string& output_dir) {
  const std::string path = (std::filesystem::path(output_dir) / kCheckpointFileName).string();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::optional<JobCheckpoint>();
    return ErrnoToStatus(errno, "cannot read checkpoint " + path);
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  try {
    const Json j = Json::parse(buffer.str());
    if (j.at("version").get<int>() != JobCheckpoint::kVersion) {
      return InvalidArgumentError("checkpoint " + path + " has version " + j.at("version").dump() + ", this litmus reads " +
                                  std::to_string(JobCheckpoint::kVersion) + " (start over with --fresh)");
    }
    JobCheckpoint checkpoint;
    checkpoint.trial = j.at("trial").get<std::string>();
    checkpoint.restarts = j.at("restarts").get<int64_t>();
    checkpoint.finished = j.at("finished").get<bool>();
    for (const Json& r : j.at("rules")) checkpoint.rules.push_back(RuleFromJson(r));
    return std::optional<JobCheckpoint>(std::move(checkpoint));
  } catch (const Json::exception& e) {
    return InvalidArgumentError("checkpoint " + path + " is not valid (" + e.what() + "); start over with --fresh");
  }
}

StatusOr<std::map<std::string, ReportedRuleEvents>> RecoverJobEvents(const std::string& events_path) {
  std::map<std::string, ReportedRuleEvents> out;
  std::ifstream in(events_path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return out;
    return ErrnoToStatus(errno, "cannot read " + events_path);
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  in.close();
  // A torn last line (no newline): the write the crash cut short. Drop it from the file.
  const size_t whole = text.empty() || text.back() == '\n' ? text.size() : text.rfind('\n') + 1;
  if (whole < text.size() && truncate(events_path.c_str(), static_cast<off_t>(whole)) != 0) {
    return ErrnoToStatus(errno, "cannot remove the torn last line of " + events_path);
  }
  size_t begin = 0;
  int64_t line_number = 0;
  while (begin < whole) {
    const size_t end = text.find('\n', begin);
    ++line_number;
    const std::string_view line(text.data() + begin, end - begin);
    begin = end + 1;
    if (line.empty()) continue;
    const Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return InvalidArgumentError(events_path + " line " + std::to_string(line_number) +
                                  " is not a JSON object: not an events file of litmus (start over with --fresh)");
    }
    const auto text_of = [&](const char* key) {
      const auto it = j.find(key);
      return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const std::string event = text_of("event");
    const std::string rule = text_of("rule");
    const auto step_it = j.find("step");
    const std::optional<int64_t> step =
        step_it != j.end() && step_it->is_number_integer() ? std::optional<int64_t>(step_it->get<int64_t>()) : std::nullopt;
    if (event == "RuleEvaluationConditionMet" && step) {
      out[rule].firings.insert(*step);
    } else if (event == "RuleEnded") {
      ReportedRuleEvents& r = out[rule];
      r.ended_status = text_of("status");
      r.ended_message = text_of("message");
      r.ended_step = step;
    }
  }
  return out;
}

namespace {

// What differs between two fingerprints (JobFingerprint's JSON): "parameters: {...} then, {...} now".
std::string FingerprintDifference(const std::string& then, const std::string& now) {
  const Json a = Json::parse(then, nullptr, /*allow_exceptions=*/false);
  const Json b = Json::parse(now, nullptr, /*allow_exceptions=*/false);
  if (a.is_discarded() || b.is_discarded() || !a.is_object() || !b.is_object()) return then + " then";
  std::string out;
  for (const auto& [key, value] : b.items()) {
    const auto it = a.find(key);
    if (it != a.end() && *it == value) continue;
    if (!out.empty()) out += "; ";
    out += key + ": " + (it != a.end() ? it->dump() : "none") + " then, " + value.dump() + " now";
  }
  return out.empty() ? "a litmus of another version" : out;
}

}  // namespace

StatusOr<ResumePlan> PlanResume(const std::string& output_dir, bool fresh, const std::string& trial,
                                const std::vector<std::pair<std::string, std::string>>& rules) {
  ResumePlan plan;
  if (fresh) return plan;
  LITMUS_ASSIGN_OR_RETURN(std::optional<JobCheckpoint> checkpoint, ReadCheckpoint(output_dir));
  if (!checkpoint || checkpoint->finished) return plan;
  const std::string how = "; run the same command to resume it, or start over with --fresh (or use another --output-dir)";
  if (checkpoint->trial != trial) {
    return InvalidArgumentError("output folder " + output_dir + " holds an interrupted job on trial " +
                                checkpoint->trial + ", not " + trial + how);
  }
  std::map<std::string, const RuleCheckpoint*> saved;
  for (const RuleCheckpoint& r : checkpoint->rules) saved[r.name] = &r;
  if (saved.size() != rules.size()) {
    return InvalidArgumentError("output folder " + output_dir + " holds an interrupted job of " +
                                std::to_string(saved.size()) + " rules, this one has " + std::to_string(rules.size()) +
                                how);
  }
  for (const auto& [name, fingerprint] : rules) {
    const auto it = saved.find(name);
    if (it == saved.end()) {
      return InvalidArgumentError("output folder " + output_dir + " holds an interrupted job without rule " + name + how);
    }
    if (it->second->fingerprint != fingerprint) {
      return InvalidArgumentError("output folder " + output_dir + " holds an interrupted job whose rule " + name +
                                  " was configured otherwise (" + FingerprintDifference(it->second->fingerprint,
                                                                                        fingerprint) +
                                  ")" + how);
    }
  }
  LITMUS_ASSIGN_OR_RETURN(auto reported,
                          RecoverJobEvents((std::filesystem::path(output_dir) / "events.jsonl").string()));
  plan.resume = true;
  plan.restarts = checkpoint->restarts;
  for (const auto& [name, unused] : rules) {
    RuleResume& r = plan.rules[name];
    r.checkpoint = *saved.at(name);
    if (const auto it = reported.find(name); it != reported.end()) {
      r.reported_firings = it->second.firings;
      const std::optional<std::string>& status = it->second.ended_status;
      if (status && (*status == "NoIssuesFound" || *status == "IssuesFound" || *status == "Error")) {
        r.ended = true;
        r.ended_status = *status;
        r.ended_details = it->second.ended_message;
        r.ended_step = it->second.ended_step;
      }
    }
  }
  return plan;
}

std::string JobFingerprint(const std::string& trial, const std::string& rule_class, const std::string& plugin,
                           const std::map<std::string, std::string>& parameters, int64_t start_step,
                           std::optional<int64_t> end_step, const std::vector<std::string>& other_trials,
                           bool keep_going, bool skip_damaged) {
  // A JSON text rather than a hash: a mismatch can then say what differs.
  Json j;
  j["trial"] = trial;
  j["rule"] = rule_class;
  j["plugin"] = plugin;
  j["parameters"] = parameters;
  j["start_step"] = start_step;
  j["end_step"] = end_step ? Json(*end_step) : Json(nullptr);
  j["other_trials"] = other_trials;
  j["keep_going"] = keep_going;
  j["skip_damaged"] = skip_damaged;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace litmus
