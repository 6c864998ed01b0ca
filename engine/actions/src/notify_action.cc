// NotifyAction (smdebug's MessageAction): Email and SMS through the SNS topic SMDebugRules. At rule
// start: CreateTopic (idempotent), then ListSubscriptions (paged) for (protocol, endpoint, topic),
// else Subscribe with a filter policy that routes each message to its own endpoint only. On
// firing: Publish with the endpoint as a message attribute.
#include <cctype>
#include <nlohmann/json.hpp>

#include "action.h"
#include "litmus/actions/endpoint_mask.h"

namespace litmus::actions {
namespace {

constexpr char kTopicName[] = "SMDebugRules";
// ListSubscriptions answers 100 per page; this bounds the search at 10000 subscriptions (after
// which Subscribe is called anyway: SNS answers it for an existing subscription too).
constexpr int kMaxSubscriptionPages = 100;

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

class NotifyAction final : public Action {
 public:
  NotifyAction(const ActionSpec& spec, ActionClient* client)
      : spec_(spec),
        protocol_(ActionKindName(spec.kind)),
        attribute_(spec.kind == ActionKind::kSms ? "phone_num" : "email"),
        client_(client) {}

  ActionResult Prepare() override {
    ActionResult result = Base();
    auto topic = client_->CreateTopic(kTopicName);
    if (!topic.ok()) {
      topic_error_ = Masked(topic.status().message());
      result.outcome = ActionOutcome::kFailed;
      result.error = topic_error_;
      return result;
    }
    topic_arn_ = *topic;
    auto subscribed = FindSubscription();
    if (!subscribed.ok()) {
      // Like smdebug: the topic is known, so firings still publish (to existing subscriptions).
      result.outcome = ActionOutcome::kFailed;
      result.error = Masked(subscribed.status().message());
      return result;
    }
    if (*subscribed) {
      result.detail = "already subscribed to topic " + std::string(kTopicName);
      return result;
    }
    const std::string filter_policy = nlohmann::json{{attribute_, {spec_.target}}}.dump();
    if (Status s = client_->Subscribe(topic_arn_, protocol_, spec_.target, filter_policy); !s.ok()) {
      result.outcome = ActionOutcome::kFailed;
      result.error = Masked(s.message());
      return result;
    }
    result.detail = "subscribed to topic " + std::string(kTopicName) +
                    (spec_.kind == ActionKind::kEmail ? " (the recipient must confirm the subscription e-mail)" : "");
    return result;
  }

  ActionResult Fire(const std::string& rule_name, const std::string& message) override {
    ActionResult result = Base();
    if (topic_arn_.empty()) {
      result.outcome = ActionOutcome::kFailed;
      result.error = "no SNS topic to publish to: " +
                     (topic_error_.empty() ? std::string("the rule-start calls did not run") : topic_error_);
      return result;
    }
    const std::string subject = "SMDebugRule:" + rule_name + " fired";
    auto id = client_->Publish(topic_arn_, subject, subject + ". " + message, attribute_, spec_.target);
    if (!id.ok()) {
      result.outcome = ActionOutcome::kFailed;
      result.error = Masked(id.status().message());
      return result;
    }
    result.detail = "published to topic " + std::string(kTopicName) + (id->empty() ? "" : " (message " + *id + ")");
    return result;
  }

 private:
  ActionResult Base() const {
    ActionResult result;
    result.action = protocol_;
    result.target = DisplayTarget(spec_);
    return result;
  }

  std::string Masked(std::string text) const { return MaskEndpointIn(std::move(text), spec_.target); }

  // Whether (protocol, endpoint, topic) is already subscribed, following NextToken.
  StatusOr<bool> FindSubscription() {
    std::string token;
    for (int page = 0; page < kMaxSubscriptionPages; ++page) {
      LITMUS_ASSIGN_OR_RETURN(SnsSubscriptionPage subscriptions, client_->ListSubscriptions(token));
      for (const auto& s : subscriptions.subscriptions) {
        if (s.protocol == protocol_ && s.topic_arn == topic_arn_ && EqualsIgnoringCase(s.endpoint, spec_.target)) {
          return true;
        }
      }
      if (subscriptions.next_token.empty()) return false;
      token = subscriptions.next_token;
    }
    return false;
  }

  const ActionSpec spec_;
  const std::string protocol_;   // "email" | "sms"
  const std::string attribute_;  // filter policy / message attribute name: "email" | "phone_num"
  ActionClient* const client_;
  std::string topic_arn_;
  std::string topic_error_;
};

}  // namespace

std::unique_ptr<Action> NewNotifyAction(const ActionSpec& spec, ActionClient* client) {
  return std::make_unique<NotifyAction>(spec, client);
}

}  // namespace litmus::actions
