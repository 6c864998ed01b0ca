// abi_cxx_header_test.cc — both public SDK headers compile as C++20 with -pedantic -Wall -Wextra
// -Werror (flags set by tests/abi/CMakeLists.txt), rule.hpp without anything but the standard
// library and rule_abi.h. Thread-safety: single-threaded test.
#include "litmus/rule.hpp"
#include "litmus/rule_abi.h"

int main() {
  static_assert(sizeof(litmus_host_api_t) > 0);
  return litmus::params::ParseInt("1").value_or(0) == 1 ? 0 : 1;
}
