// The binary's logger: every log line on stderr as `litmus: <level>: <message>` (`litmus: error:
// ...`, `litmus: warning: ...`: the format of Fail's one-line errors), the level colored on a
// terminal, and `litmus run`'s progress line cleared before each line.
#pragma once

#include <spdlog/logger.h>

#include <memory>

namespace litmus::cli {

std::shared_ptr<spdlog::logger> MakeStderrLogger();

}  // namespace litmus::cli
