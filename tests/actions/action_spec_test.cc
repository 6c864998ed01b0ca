// action_json parsing (docs/job-contract.md §8) and endpoint masking: both serialized forms, one
// object or a list, lower-casing, skipped/unknown actions, the rulesconfig checks, add_action
// strings and de-duplication.
#include "litmus/actions/action_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "litmus/actions/endpoint_mask.h"
#include "support/temp_dir.h"

namespace litmus::actions {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::vector<ActionSpec> Parse(std::string_view text, std::vector<std::string>* notes = nullptr) {
  auto specs = ParseActionJson(text, "action_json", notes);
  EXPECT_TRUE(specs.ok()) << specs.status().ToString();
  return specs.ok() ? *specs : std::vector<ActionSpec>{};
}

std::string ParseError(std::string_view text) {
  auto specs = ParseActionJson(text, "action_json", nullptr);
  EXPECT_FALSE(specs.ok());
  if (specs.ok()) return "";
  EXPECT_EQ(specs.status().code(), StatusCode::kInvalidArgument);
  return specs.status().message();
}

const ActionSpec kStop{ActionKind::kStopTraining, "my-job"};
const ActionSpec kEmail{ActionKind::kEmail, "jane@example.com"};
const ActionSpec kSms{ActionKind::kSms, "+14155550123"};

TEST(ActionJson, EmptyMeansNoActions) {
  EXPECT_THAT(Parse(""), IsEmpty());
  EXPECT_THAT(Parse("  \n"), IsEmpty());
  EXPECT_THAT(Parse("[]"), IsEmpty());
}

TEST(ActionJson, RawListOfAllThree) {
  EXPECT_THAT(Parse(R"([{"name": "stoptraining", "training_job_prefix": "my-job"},
                        {"name": "email", "endpoint": "jane@example.com"},
                        {"name": "sms", "endpoint": "+14155550123"}])"),
              ElementsAre(kStop, kEmail, kSms));
}

// What rulesconfig writes into RuleParameters: a backslash before every quote.
TEST(ActionJson, BackslashEscapedForm) {
  EXPECT_THAT(Parse(R"([{\"name\": \"stoptraining\", \"training_job_prefix\": \"my-job\"}, )"
                    R"({\"name\": \"email\", \"endpoint\": \"jane@example.com\"}, )"
                    R"({\"name\": \"sms\", \"endpoint\": \"+14155550123\"}])"),
              ElementsAre(kStop, kEmail, kSms));
  EXPECT_THAT(Parse(R"({\"name\": \"sms\", \"endpoint\": \"+14155550123\"})"), ElementsAre(kSms));
}

TEST(ActionJson, SingleObject) {
  EXPECT_THAT(Parse(R"({"name": "email", "endpoint": "jane@example.com"})"), ElementsAre(kEmail));
}

// smdebug lower-cases the whole string, names and values alike.
TEST(ActionJson, WholeStringIsLowerCased) {
  EXPECT_THAT(Parse(R"([{"Name": "StopTraining", "Training_Job_Prefix": "My-Job"},
                        {"NAME": "EMAIL", "ENDPOINT": "Jane@Example.COM"}])"),
              ElementsAre(kStop, kEmail));
}

TEST(ActionJson, MissingParametersAndUnknownNamesAreSkippedWithANote) {
  std::vector<std::string> notes;
  EXPECT_THAT(Parse(R"([{"name": "stoptraining"}, {"name": "email"}, {"name": "sms", "endpoint": null},
                        {"name": "pager", "endpoint": "x"}, {"endpoint": "jane@example.com"}, 7,
                        {"name": "email", "endpoint": "jane@example.com"}])",
                    &notes),
              ElementsAre(kEmail));
  ASSERT_EQ(notes.size(), 6u);
  EXPECT_THAT(notes[0], HasSubstr("stoptraining requires 'training_job_prefix'"));
  EXPECT_THAT(notes[1], HasSubstr("email requires 'endpoint'"));
  EXPECT_THAT(notes[2], HasSubstr("sms requires 'endpoint'"));
  EXPECT_THAT(notes[3], HasSubstr("action 'pager' is not supported"));
  EXPECT_THAT(notes[4], HasSubstr("without a name"));
  EXPECT_THAT(notes[5], HasSubstr("expected an object"));
}

TEST(ActionJson, MalformedJsonIsOneClearLine) {
  const std::string error = ParseError(R"([{"name": "email", "endpoint": "jane@example.com")");
  EXPECT_THAT(error, HasSubstr("action_json is not valid JSON"));
  EXPECT_EQ(error.find('\n'), std::string::npos);
  EXPECT_THAT(error, Not(HasSubstr("jane")));  // the text (an endpoint) is never quoted
  EXPECT_THAT(ParseError("stoptraining"), HasSubstr("not valid JSON"));
  EXPECT_THAT(ParseError(R"("stoptraining")"), HasSubstr("expected a JSON object or a list"));
  EXPECT_THAT(ParseError("42"), HasSubstr("expected a JSON object or a list"));
}

TEST(ActionJson, NonStringValuesAreRejected) {
  EXPECT_THAT(ParseError(R"({"name": "stoptraining", "training_job_prefix": 12})"),
              HasSubstr("training_job_prefix must be a string"));
  EXPECT_THAT(ParseError(R"({"name": "sms", "endpoint": ["+1"]})"), HasSubstr("endpoint must be a string"));
}

TEST(ActionJson, PrefixMustBeATrainingJobName) {
  EXPECT_THAT(Parse(R"({"name": "stoptraining", "training_job_prefix": "a-1-B"})"),
              ElementsAre(ActionSpec{ActionKind::kStopTraining, "a-1-b"}));
  EXPECT_THAT(ParseError(R"({"name": "stoptraining", "training_job_prefix": "my_job"})"),
              HasSubstr("training_job_prefix 'my_job' is invalid"));
  EXPECT_THAT(ParseError(R"({"name": "stoptraining", "training_job_prefix": ""})"), HasSubstr("is invalid"));
}

TEST(ActionJson, SmsEndpointMustBeE164AndIsMaskedInErrors) {
  EXPECT_THAT(Parse(R"({"name": "sms", "endpoint": "+1"})"), ElementsAre(ActionSpec{ActionKind::kSms, "+1"}));
  const std::string error = ParseError(R"({"name": "sms", "endpoint": "4155550123"})");
  EXPECT_THAT(error, HasSubstr("not an E.164 phone number"));
  EXPECT_THAT(error, Not(HasSubstr("4155550123")));
  EXPECT_THAT(ParseError(R"({"name": "sms", "endpoint": "+1234567890123456"})"), HasSubstr("E.164"));
}

// rulesconfig's pattern rejects valid addresses: litmus warns for those and rejects non-addresses.
TEST(ActionJson, EmailOverRestrictionIsAWarningNotAnError) {
  std::vector<std::string> notes;
  EXPECT_THAT(Parse(R"({"name": "email", "endpoint": "jane.doe@mail.example.org"})", &notes),
              ElementsAre(ActionSpec{ActionKind::kEmail, "jane.doe@mail.example.org"}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("does not match the SageMaker SDK's pattern"));
  EXPECT_THAT(notes[0], HasSubstr("j***@m***.org"));
  EXPECT_THAT(notes[0], Not(HasSubstr("jane.doe")));
  const std::string error = ParseError(R"({"name": "email", "endpoint": "jane.example.com"})");
  EXPECT_THAT(error, HasSubstr("is not an e-mail address"));
  EXPECT_THAT(error, Not(HasSubstr("jane.example")));
}

TEST(RuleActionsJson, AddActionStringsFollowActionJsonAndDuplicatesRunOnce) {
  std::vector<std::string> notes;
  auto specs = ParseRuleActions(R"([{"name": "stoptraining", "training_job_prefix": "my-job"}])",
                                {R"({"name": "StopTraining", "training_job_prefix": "MY-JOB"})",
                                 R"({\"name\": \"sms\", \"endpoint\": \"+14155550123\"})"},
                                &notes);
  ASSERT_TRUE(specs.ok()) << specs.status().ToString();
  EXPECT_THAT(*specs, ElementsAre(kStop, kSms));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("configured twice"));
  auto bad = ParseRuleActions("", {"[", "{}"}, nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("add_action #1 is not valid JSON"));
  auto none = ParseRuleActions("", {}, nullptr);
  ASSERT_TRUE(none.ok());
  EXPECT_THAT(*none, IsEmpty());
}

TEST(EndpointMask, MasksAddressesAndNumbers) {
  EXPECT_EQ(MaskEndpoint("jane.doe@example.com"), "j***@e***.com");
  EXPECT_EQ(MaskEndpoint("j@localhost"), "j***@l***");
  EXPECT_EQ(MaskEndpoint("+14155550123"), "+*********23");
  EXPECT_EQ(MaskEndpoint("+12"), "+***");
  EXPECT_EQ(MaskEndpoint("whatever"), "w***");
  EXPECT_EQ(MaskEndpoint(""), "");
  EXPECT_EQ(DisplayTarget(kStop), "my-job");
  EXPECT_EQ(DisplayTarget(kEmail), "j***@e***.com");
  EXPECT_EQ(DisplayTarget(kSms), "+*********23");
}

TEST(EndpointMask, MasksEndpointsInsideMessagesRawAndPercentEncoded) {
  EXPECT_EQ(MaskEndpointIn("HTTP 400 InvalidParameter: Endpoint jane@example.com (Endpoint=jane%40example.com)",
                           "jane@example.com"),
            "HTTP 400 InvalidParameter: Endpoint j***@e***.com (Endpoint=j***@e***.com)");
  EXPECT_EQ(MaskEndpointIn("phone %2B14155550123 / +14155550123", "+14155550123"),
            "phone +*********23 / +*********23");
  EXPECT_EQ(MaskEndpointIn("nothing here", ""), "nothing here");
}

}  // namespace
}  // namespace litmus::actions
