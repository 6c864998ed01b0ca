// install_consumer/main.cc — compiles and links against the installed litmus::writer and
// litmus::format, including a generated protobuf header. Thread-safety: single-threaded.
#include "litmus/format/crc32c.h"
#include "litmus/format/proto/event.pb.h"
#include "litmus/rule_abi.h"
#include "litmus/status.h"
#include "litmus/writer/writer.h"

int main() {
  litmus::Status status = litmus::Status();
  return status.ok() && LITMUS_ABI_MAJOR == 1 ? 0 : 1;
}
