// MaskEndpoint / DisplayTarget / MaskEndpointIn.
#include "litmus/actions/endpoint_mask.h"

#include "litmus/aws/http.h"

namespace litmus::actions {
namespace {

void ReplaceAll(std::string& text, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

}  // namespace

std::string MaskEndpoint(std::string_view endpoint) {
  // Built with append: GCC 12 misreports operator+ chains on short strings (-Wrestrict).
  std::string masked;
  if (endpoint.empty()) return masked;
  const size_t at = endpoint.find('@');
  if (at != std::string_view::npos && at > 0) {
    const std::string_view domain = endpoint.substr(at + 1);
    const size_t dot = domain.rfind('.');
    masked.push_back(endpoint[0]);
    masked.append("***@");
    if (!domain.empty()) {
      masked.push_back(domain[0]);
      masked.append("***");
    }
    if (dot != std::string_view::npos && dot > 0) masked.append(domain.substr(dot));
    return masked;
  }
  if (endpoint[0] == '+' && endpoint.size() > 3) {
    masked.push_back('+');
    masked.append(endpoint.size() - 3, '*');
    masked.append(endpoint.substr(endpoint.size() - 2));
    return masked;
  }
  masked.push_back(endpoint[0]);
  masked.append("***");
  return masked;
}

std::string DisplayTarget(const ActionSpec& spec) {
  return spec.kind == ActionKind::kStopTraining ? spec.target : MaskEndpoint(spec.target);
}

std::string MaskEndpointIn(std::string text, std::string_view endpoint) {
  if (endpoint.empty()) return text;
  const std::string masked = MaskEndpoint(endpoint);
  ReplaceAll(text, endpoint, masked);
  ReplaceAll(text, aws::UriEncode(endpoint), masked);
  return text;
}

}  // namespace litmus::actions
