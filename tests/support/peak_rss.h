// Peak RSS of a program run to its end, for tests that bound how memory grows with a trial
// (never a wall-clock check). Measured in a child of the test process so that no other child
// counts (RUSAGE_CHILDREN). Thread-compatible.
#pragma once

#include <string>
#include <vector>

namespace litmus::testing {

// The peak RSS in KiB of `argv` (RunProcess), or -1 if it could not be run or exited non-zero.
// Under AddressSanitizer (the CI's sanitizer build) freed memory waits in a quarantine of up to
// 256 MB before it is reused, so peak RSS would follow everything ever allocated rather than
// what is live at once: the program runs without it (ASAN_OPTIONS; ignored elsewhere).
long PeakRssKib(const std::vector<std::string>& argv);

}  // namespace litmus::testing
