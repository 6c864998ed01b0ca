// EventDestinations: where `litmus run` publishes its rule status events (docs/events.md): an
// HTTP webhook (--events-url) and/or an Amazon EventBridge bus (--eventbridge-bus), optionally
// also in the shape of SageMaker's "SageMaker Training Job State Change" event. Pure data and
// functions, filled by the run configuration (run/job_config.h); thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "litmus/status.h"

namespace litmus::events {

struct EventDestinations {
  std::string webhook_url;          // http:// or https:// URL; empty: no webhook
  std::string eventbridge_bus;      // bus name or ARN; empty: no EventBridge
  bool sagemaker_shape = false;     // also "SageMaker Training Job State Change" on status changes
  std::string training_job_name;    // its TrainingJobName (required with sagemaker_shape)
  double flush_timeout_s = 10;      // how long the job's end waits for undelivered events

  bool any() const { return !webhook_url.empty() || !eventbridge_bus.empty(); }
};

// The training job of a SageMaker trial path: SageMaker's trial is
// <DebugHookConfig.S3OutputPath>/<training-job-name>/debug-output (docs/job-contract.md §2), so
// "s3://b/out/my-job/debug-output/" gives "my-job". nullopt for any other shape.
std::optional<std::string> TrainingJobNameFromTrial(std::string_view trial);

// InvalidArgument, one line naming the option, for: a webhook URL that is not http(s)://HOST...,
// a bus name that EventBridge would refuse (1-256 characters of [A-Za-z0-9._/:-]), the SageMaker
// shape without a training job name (or with an invalid one: 1-63 of [A-Za-z0-9-]), a flush
// timeout that is negative or not a number.
Status CheckEventDestinations(const EventDestinations& destinations);

// Completes what the command line gave for a job on `trial`: the training job's name from the
// trial path when the SageMaker shape is asked for and no name was given, the flush timeout from
// `flush_timeout_env` (LITMUS_EVENTS_FLUSH_TIMEOUT_S, seconds; unset or empty: keep), then
// CheckEventDestinations.
Status CompleteEventDestinations(EventDestinations* destinations, std::string_view trial,
                                 const std::optional<std::string>& flush_timeout_env);

// "scheme://host[:port]" of a URL: what logs show of a webhook, whose path or query may hold a
// secret token.
std::string UrlOrigin(std::string_view url);

}  // namespace litmus::events
