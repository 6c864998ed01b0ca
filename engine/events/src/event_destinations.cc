// EventDestinations: checks, the training job of a trial path, and a URL's origin for logs.
#include "litmus/events/event_destinations.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace litmus::events {

std::optional<std::string> TrainingJobNameFromTrial(std::string_view trial) {
  while (!trial.empty() && trial.back() == '/') trial.remove_suffix(1);
  constexpr std::string_view kSuffix = "/debug-output";
  if (trial.size() <= kSuffix.size() || trial.substr(trial.size() - kSuffix.size()) != kSuffix) return std::nullopt;
  trial.remove_suffix(kSuffix.size());
  const size_t slash = trial.rfind('/');
  std::string_view job = slash == std::string_view::npos ? trial : trial.substr(slash + 1);
  if (job.empty() || job.find(':') != std::string_view::npos) return std::nullopt;
  return std::string(job);
}

std::string UrlOrigin(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return "(invalid URL)";
  const size_t end = url.find_first_of("/?#", scheme + 3);
  std::string_view origin = url.substr(0, end);
  // user:password@host -> host
  if (const size_t at = origin.rfind('@'); at != std::string_view::npos && at > scheme) {
    return std::string(origin.substr(0, scheme + 3)) + std::string(origin.substr(at + 1));
  }
  return std::string(origin);
}

Status CheckEventDestinations(const EventDestinations& d) {
  if (!d.webhook_url.empty()) {
    const std::string& url = d.webhook_url;
    const bool http = url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
    const size_t host = url.find("://") + 3;
    if (!http || host >= url.size() || url.find_first_of("/?#", host) == host ||
        url.find_first_of(" \t\r\n") != std::string::npos) {
      return InvalidArgumentError("--events-url: expected an http:// or https:// URL with a host, got '" +
                                  UrlOrigin(url) + "...'");
    }
  }
  if (!d.eventbridge_bus.empty()) {
    const std::string& bus = d.eventbridge_bus;
    const bool ok = bus.size() <= 256 && std::all_of(bus.begin(), bus.end(), [](unsigned char c) {
                      return std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == '/' || c == ':';
                    });
    if (!ok) {
      return InvalidArgumentError("--eventbridge-bus: '" + bus +
                                  "' is not an event bus name or ARN (1-256 of letters, digits, . _ - / :)");
    }
  }
  if (d.sagemaker_shape) {
    if (d.eventbridge_bus.empty()) {
      return InvalidArgumentError("--eventbridge-sagemaker-shape needs --eventbridge-bus");
    }
    const std::string& job = d.training_job_name;
    if (job.empty()) {
      return InvalidArgumentError(
          "--eventbridge-sagemaker-shape: the training job's name is not known (the trial is not "
          "<path>/<training-job>/debug-output); give it with --training-job-name");
    }
    const bool ok = job.size() <= 63 && std::all_of(job.begin(), job.end(), [](unsigned char c) {
                      return std::isalnum(c) || c == '-';
                    });
    if (!ok) {
      return InvalidArgumentError("--training-job-name: '" + job +
                                  "' is not a training job name (1-63 of letters, digits and -)");
    }
  }
  if (!std::isfinite(d.flush_timeout_s) || d.flush_timeout_s < 0) {
    return InvalidArgumentError("LITMUS_EVENTS_FLUSH_TIMEOUT_S: expected a number of seconds >= 0");
  }
  return OkStatus();
}

Status CompleteEventDestinations(EventDestinations* d, std::string_view trial,
                                 const std::optional<std::string>& flush_timeout_env) {
  if (d->sagemaker_shape && d->training_job_name.empty()) {
    d->training_job_name = TrainingJobNameFromTrial(trial).value_or("");
  }
  if (flush_timeout_env && !flush_timeout_env->empty()) {
    char* end = nullptr;
    const double s = std::strtod(flush_timeout_env->c_str(), &end);
    if (end == flush_timeout_env->c_str() || *end != '\0' || !std::isfinite(s) || s < 0) {
      return InvalidArgumentError("LITMUS_EVENTS_FLUSH_TIMEOUT_S: expected a number of seconds >= 0, got '" +
                                  *flush_timeout_env + "'");
    }
    d->flush_timeout_s = s;
  }
  return CheckEventDestinations(*d);
}

}  // namespace litmus::events
