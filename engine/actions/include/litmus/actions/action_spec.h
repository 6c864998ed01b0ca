// ActionSpec and the parsing of `action_json` (docs/job-contract.md §8): what a rule job should do
// when its rule fires, as the SageMaker Python SDK serializes it into RuleParameters (raw JSON or
// the backslash-escaped form, one object or a list), plus the checks rulesconfig makes.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "litmus/status.h"

namespace litmus::actions {

enum class ActionKind { kStopTraining, kEmail, kSms };

// "stoptraining", "email", "sms": the names used in action_json and in events.
std::string_view ActionKindName(ActionKind kind);

struct ActionSpec {
  ActionKind kind = ActionKind::kStopTraining;
  // StopTraining: training_job_prefix; Email/SMS: endpoint (address or E.164 number). Lower-cased,
  // as the whole action_json is (smdebug's Actions does the same).
  std::string target;

  friend bool operator==(const ActionSpec&, const ActionSpec&) = default;
};

// Parses one action_json value. `origin` names it in messages ("action_json", "add_action").
//  - "" (or only spaces) is no action.
//  - The whole text is lower-cased (ASCII) first; then it is parsed as JSON, and if that fails,
//    once more after undoing Python string-literal escapes (\" -> ", \\ -> \, \' -> '), the form
//    rulesconfig writes.
//  - One object or a list of objects. Skipped, each with one line appended to *notes: an element
//    that is not an object, an object without a name, an unknown name, a stoptraining without
//    training_job_prefix or an email/sms without endpoint (missing or null).
//  - Checks (rulesconfig's, decided per field, see docs/actions.md): a training_job_prefix must
//    match ^[a-z0-9-]+$ and an sms endpoint ^\+\d{1,15}$ (E.164), else InvalidArgument; an email
//    endpoint that fails rulesconfig's ^[a-z0-9]+@\w+\.\w{2,3}$ but is still an address
//    (local@domain.tld) only adds a note, because that pattern rejects valid addresses such as
//    first.last@example.co.uk; anything else is InvalidArgument.
// InvalidArgument (one line, starting with `origin`; endpoints masked) for text that is not JSON
// in either form, JSON that is neither an object nor a list, a prefix or endpoint that is not a
// string, and failed checks. A name that is not a string is an unknown name. *notes may be null.
StatusOr<std::vector<ActionSpec>> ParseActionJson(std::string_view text, std::string_view origin,
                                                  std::vector<std::string>* notes);

// A rule's actions: its action_json, then the action JSON strings the rule registered itself
// (the add_action host call, same form), each parsed as above ("add_action #<i>" in messages).
// An action equal to an earlier one (same kind and target) is dropped with a note, so a stop or
// message is never sent twice for one firing.
StatusOr<std::vector<ActionSpec>> ParseRuleActions(std::string_view action_json,
                                                   const std::vector<std::string>& extra_action_jsons,
                                                   std::vector<std::string>* notes);

}  // namespace litmus::actions
