// litmus/rule/internal.hpp — part of litmus/rule.hpp, not for rule authors: forward declarations
// the other parts share and the SDK's glue to the C ABI (string conversion, float16, turning the
// exception being handled into a status and set_error text, copying the host table).
// Thread-safety: pure functions; SetErrorText and StatusFromCurrentException call the host on the
// caller's thread, inside a host call.
#ifndef LITMUS_RULE_INTERNAL_HPP_
#define LITMUS_RULE_INTERNAL_HPP_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <string_view>

#include "litmus/rule/errors.hpp"
#include "litmus/rule_abi.h"

namespace litmus {

class Rule;
class Trial;
class Tensor;
class RequiredTensors;
class RuleArgs;

namespace internal {
struct Thunks;
template <class State, class T, size_t I>
litmus_status_t CreateThunk(litmus_ctx_t* ctx, const litmus_param_t* params, size_t param_count,
                            litmus_rule_instance_t** instance) noexcept;

inline litmus_str_t ToStr(std::string_view text) { return {text.data(), text.size()}; }
inline std::string_view FromStr(litmus_str_t text) {
  return text.size == 0 ? std::string_view() : std::string_view(text.data, text.size);
}

// IEEE 754 binary16 to double.
inline double HalfToDouble(uint16_t half) {
  const int sign = (half >> 15) & 1;
  const int exponent = (half >> 10) & 0x1f;
  const int fraction = half & 0x3ff;
  double value = 0;
  if (exponent == 0) {
    value = std::ldexp(static_cast<double>(fraction), -24);
  } else if (exponent == 31) {
    value = fraction == 0 ? std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::quiet_NaN();
  } else {
    value = std::ldexp(static_cast<double>(fraction | 0x400), exponent - 25);
  }
  return sign ? -value : value;
}

// Records set_error text without allocating (it runs inside catch handlers), if the host has it.
inline void SetErrorText(const litmus_host_api_t* host, litmus_ctx_t* ctx, std::string_view prefix,
                         std::string_view text) noexcept {
  if (host == nullptr || host->set_error == nullptr) return;
  char buffer[1024];
  size_t size = std::min(prefix.size(), sizeof(buffer));
  if (size > 0) std::memcpy(buffer, prefix.data(), size);
  const size_t rest = std::min(text.size(), sizeof(buffer) - size);
  if (rest > 0) std::memcpy(buffer + size, text.data(), rest);
  size += rest;
  host->set_error(ctx, buffer, size);
}

// The status for the exception being handled; records its text with set_error unless the host
// already did. Call only from inside a catch block.
inline litmus_status_t StatusFromCurrentException(const litmus_host_api_t* host,
                                                  litmus_ctx_t* ctx) noexcept {
  try {
    throw;
  } catch (const Error& error) {
    litmus_status_t status = error.status();
    if (status == LITMUS_OK || status == LITMUS_CONDITION_MET) status = LITMUS_INTERNAL;
    if (!error.host_reported()) SetErrorText(host, ctx, {}, error.what());
    return status;
  } catch (const std::bad_alloc&) {
    SetErrorText(host, ctx, {}, "out of memory");
    return LITMUS_INTERNAL;
  } catch (const std::exception& error) {
    SetErrorText(host, ctx, "uncaught exception: ", error.what());
    return LITMUS_INTERNAL;
  } catch (...) {
    SetErrorText(host, ctx, {}, "uncaught exception of a type not derived from std::exception");
    return LITMUS_INTERNAL;
  }
}

// Copies a host table into a full-size, zero-filled one, reading no byte beyond host->struct_size:
// functions the host does not have (an older or smaller table) are then NULL.
inline void SnapshotHost(const litmus_host_api_t* host, litmus_host_api_t* out) noexcept {
  std::memset(out, 0, sizeof(*out));
  const size_t size = std::min<size_t>(host->struct_size, sizeof(*out));
  std::memcpy(out, host, size);
}

}  // namespace internal

}  // namespace litmus

#endif  // LITMUS_RULE_INTERNAL_HPP_
