// abi_negative_needs_protobuf.cc — a shared object that links libprotobuf, for the negative test
// of check_plugin.cmake's NEEDED check (a plugin must depend only on libc, libm, libstdc++ and
// libgcc). Never loaded. Thread-safety: no state.
#include <google/protobuf/stubs/common.h>

extern "C" __attribute__((visibility("default"))) int litmus_abi_negative_probe() {
  GOOGLE_PROTOBUF_VERIFY_VERSION;
  return 0;
}
