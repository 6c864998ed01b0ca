// Masking of action endpoints (e-mail addresses, phone numbers) for logs, events and error
// messages: the contract says never to log them in full. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "litmus/actions/action_spec.h"

namespace litmus::actions {

// "jane.doe@example.com" -> "j***@e***.com"; "+14155550123" -> "+*********23"; anything else ->
// its first character + "***". Never returns more than those few characters of the input.
std::string MaskEndpoint(std::string_view endpoint);

// What events and logs show as an action's target: the training job prefix as is (a job name is
// not personal data), e-mail and SMS endpoints masked.
std::string DisplayTarget(const ActionSpec& spec);

// `text` with every occurrence of `endpoint` (as given, and percent-encoded as in a query string)
// replaced by MaskEndpoint(endpoint): for error messages that may quote a request or an AWS
// answer. Returns `text` unchanged for an empty endpoint.
std::string MaskEndpointIn(std::string text, std::string_view endpoint);

}  // namespace litmus::actions
