// Process exit codes of the `litmus` binary (docs/run.md, "Exit codes") and the one-line failure
// helper.
#pragma once

#include <string_view>

namespace litmus::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitConditionMet = 1;  // a rule fired (litmus run)
inline constexpr int kExitBadInput = 2;      // bad arguments, configuration or trial
inline constexpr int kExitInternal = 3;      // a litmus or plugin bug
inline constexpr int kExitStopped = 143;     // SIGTERM or stop signal file

// Prints "litmus: error: <message>" as one line on stderr (the logger's format for errors) and
// returns `code`.
int Fail(int code, std::string_view message);

}  // namespace litmus::cli
