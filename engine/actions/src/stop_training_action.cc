// StopTrainingAction (smdebug's StopTrainingAction): at rule start, find the in-progress training
// jobs whose names start with the prefix; on firing, stop the job if exactly one was found.
#include <set>

#include "action.h"

namespace litmus::actions {
namespace {

constexpr int kMaxPages = 50;   // smdebug's bound (awslabs/sagemaker-debugger PR #349)
constexpr int kMaxErrors = 5;   // failed ListTrainingJobs calls before giving up

std::string AsciiLower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

std::string JoinNames(const std::set<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

class StopTrainingAction final : public Action {
 public:
  StopTrainingAction(const ActionSpec& spec, ActionClient* client) : prefix_(spec.target), client_(client) {}

  ActionResult Prepare() override {
    ActionResult result = Base();
    std::string token;
    int pages = 0;
    int errors = 0;
    while (pages < kMaxPages) {
      auto page = client_->ListInProgressTrainingJobs(prefix_, token);
      if (!page.ok()) {
        if (++errors >= kMaxErrors) {
          prepare_error_ = "sagemaker:ListTrainingJobs failed " + std::to_string(errors) +
                           " times, giving up: " + page.status().message();
          result.outcome = ActionOutcome::kFailed;
          result.error = prepare_error_;
          return result;
        }
        continue;  // the same page again
      }
      ++pages;
      // NameContains is a substring match; the prefix was lower-cased with the whole
      // action_json, so compare lower-cased (a job named with capitals can still be stopped).
      for (const auto& job : page->jobs) {
        if (AsciiLower(job.name).starts_with(prefix_)) matches_.insert(job.name);
      }
      if (!matches_.empty() || page->next_token.empty()) break;
      token = page->next_token;
    }
    prepared_ = true;
    if (matches_.size() == 1) {
      result.detail = "in-progress training job " + *matches_.begin() + " matches; it is stopped if the rule fires";
    } else if (matches_.empty()) {
      result.detail = "no in-progress training job starts with '" + prefix_ + "' (" + std::to_string(pages) +
                      " ListTrainingJobs pages); nothing will be stopped";
    } else {
      result.detail = std::to_string(matches_.size()) + " in-progress training jobs start with '" + prefix_ +
                      "' (" + JoinNames(matches_) + "); nothing will be stopped";
    }
    return result;
  }

  ActionResult Fire(const std::string& /*rule_name*/, const std::string& /*message*/) override {
    ActionResult result = Base();
    if (!prepared_) {
      result.outcome = ActionOutcome::kFailed;
      result.error = "no training job to stop: " +
                     (prepare_error_.empty() ? std::string("the rule-start listing did not run") : prepare_error_);
      return result;
    }
    if (matches_.size() != 1) {
      result.outcome = ActionOutcome::kSkipped;
      result.detail = std::to_string(matches_.size()) + " in-progress training jobs started with '" + prefix_ +
                      "' at rule start; StopTraining stops a job only when exactly one does";
      return result;
    }
    const std::string& job = *matches_.begin();
    if (Status s = client_->StopTrainingJob(job); !s.ok()) {
      result.outcome = ActionOutcome::kFailed;
      result.error = s.message();
      return result;
    }
    result.detail = "stopped training job " + job;
    return result;
  }

 private:
  ActionResult Base() const {
    ActionResult result;
    result.action = std::string(ActionKindName(ActionKind::kStopTraining));
    result.target = prefix_;
    return result;
  }

  const std::string prefix_;
  ActionClient* const client_;
  bool prepared_ = false;
  std::string prepare_error_;
  std::set<std::string> matches_;
};

}  // namespace

std::unique_ptr<Action> NewStopTrainingAction(const ActionSpec& spec, ActionClient* client) {
  return std::make_unique<StopTrainingAction>(spec, client);
}

}  // namespace litmus::actions
