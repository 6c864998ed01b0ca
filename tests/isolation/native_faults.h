// Under AddressSanitizer (the CI's sanitizer build) the faults of the rules the isolation tests
// load must happen as they do in a normal build: a segfault or a stack overflow kills with SIGSEGV
// instead of ASan's report and exit, and an allocation over the memory limit fails
// (std::bad_alloc) instead of aborting. The litmus processes a test starts read ASAN_OPTIONS when
// they start (this process has read its own already): including this header sets it for them.
#pragma once

#include <cstdlib>
#include <string>

namespace litmus::testing {

inline const bool kNativeFaults = [] {
  const char* options = std::getenv("ASAN_OPTIONS");
  std::string value = options != nullptr && *options != '\0' ? std::string(options) + ":" : std::string();
  value += "handle_segv=0:allocator_may_return_null=1";
  return setenv("ASAN_OPTIONS", value.c_str(), 1) == 0;
}();

}  // namespace litmus::testing
