// EventDestinations: option checks, the training job of a SageMaker trial path, URL origins for
// logs, and the run configuration's --events-url/--eventbridge-* handling (BuildJobConfig).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "litmus/events/event_destinations.h"
#include "run/job_config.h"

namespace litmus::events {
namespace {

using ::testing::HasSubstr;

TEST(EventDestinationsTest, TrainingJobNameFromSageMakerTrialPaths) {
  EXPECT_EQ(TrainingJobNameFromTrial("s3://bucket/out/my-job-1/debug-output"), "my-job-1");
  EXPECT_EQ(TrainingJobNameFromTrial("s3://bucket/my-job/debug-output/"), "my-job");
  EXPECT_EQ(TrainingJobNameFromTrial("/data/run-7/debug-output"), "run-7");
  EXPECT_EQ(TrainingJobNameFromTrial("s3://bucket/debug-output"), "bucket");
  EXPECT_EQ(TrainingJobNameFromTrial("s3://debug-output"), std::nullopt);
  EXPECT_EQ(TrainingJobNameFromTrial("/data/run-7"), std::nullopt);
  EXPECT_EQ(TrainingJobNameFromTrial("debug-output"), std::nullopt);
}

TEST(EventDestinationsTest, UrlOriginHidesPathQueryAndUserInfo) {
  EXPECT_EQ(UrlOrigin("https://hooks.example.com/services/T0/B0/XYZ?x=1"), "https://hooks.example.com");
  EXPECT_EQ(UrlOrigin("http://user:pw@127.0.0.1:8080/a"), "http://127.0.0.1:8080");
  EXPECT_EQ(UrlOrigin("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
  EXPECT_EQ(UrlOrigin("nonsense"), "(invalid URL)");
}

EventDestinations Make(std::string url, std::string bus = "", bool shape = false, std::string job = "") {
  EventDestinations d;
  d.webhook_url = std::move(url);
  d.eventbridge_bus = std::move(bus);
  d.sagemaker_shape = shape;
  d.training_job_name = std::move(job);
  return d;
}

TEST(EventDestinationsTest, Checks) {
  EXPECT_TRUE(CheckEventDestinations(EventDestinations()).ok());
  EXPECT_TRUE(CheckEventDestinations(Make("https://h.example.com/x")).ok());
  EXPECT_TRUE(CheckEventDestinations(Make("", "arn:aws:events:eu-west-1:123456789012:event-bus/ops")).ok());
  for (const char* bad : {"ftp://h/x", "h.example.com/x", "http:///x", "http://h/a b"}) {
    const Status s = CheckEventDestinations(Make(bad));
    EXPECT_THAT(std::string(s.message()), HasSubstr("--events-url")) << bad;
  }
  EXPECT_THAT(std::string(CheckEventDestinations(Make("", "a bus")).message()),
              HasSubstr("--eventbridge-bus"));
  EXPECT_THAT(std::string(CheckEventDestinations(Make("", "", true)).message()),
              HasSubstr("needs --eventbridge-bus"));
  EXPECT_THAT(std::string(CheckEventDestinations(Make("", "b", true)).message()),
              HasSubstr("--training-job-name"));
  EXPECT_THAT(std::string(CheckEventDestinations(Make("", "b", true, "a_b"))
                              .message()),
              HasSubstr("not a training job name"));
}

TEST(EventDestinationsTest, RunConfigurationCompletesAndChecksThem) {
  const auto env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "LITMUS_EVENTS_FLUSH_TIMEOUT_S") return "2.5";
    return std::nullopt;
  };
  RunCommandLine line;
  line.trial = "s3://bucket/out/my-job/debug-output";
  line.rule = "VanishingGradient";
  line.events = Make("", "ops", true);
  auto config = BuildJobConfig(line, env);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->events.training_job_name, "my-job");
  EXPECT_EQ(config->events.flush_timeout_s, 2.5);

  line.trial = "/data/run";
  EXPECT_THAT(std::string(BuildJobConfig(line, env).status().message()), HasSubstr("--training-job-name"));
  line.events.training_job_name = "other-job";
  EXPECT_TRUE(BuildJobConfig(line, env).ok());

  const auto bad_timeout = [](const std::string& name) -> std::optional<std::string> {
    if (name == "LITMUS_EVENTS_FLUSH_TIMEOUT_S") return "soon";
    return std::nullopt;
  };
  EXPECT_THAT(std::string(BuildJobConfig(line, bad_timeout).status().message()),
              HasSubstr("LITMUS_EVENTS_FLUSH_TIMEOUT_S"));
}

}  // namespace
}  // namespace litmus::events
