#!/usr/bin/env bash
# The README's test command: installs dependencies, builds litmus with every test, benchmark and
# example, and runs the whole CTest suite. Works before or after scripts/quickstart.sh: it forces
# the options the suite needs on the build folder (quickstart configures it without tests), so the
# objects quickstart compiled are reused. Fails when a test fails, when no test ran, or when fewer
# tests ran than are registered. BUILD_DIR (default ./build) and JOBS (default nproc) apply.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}

bash scripts/install-deps.sh
BUILD_DIR="$build_dir" JOBS="$jobs" bash scripts/build.sh \
  -DLITMUS_BUILD_TESTS=ON -DLITMUS_BUILD_BENCH=ON -DLITMUS_BUILD_EXAMPLES=ON

# The number of tests registered; gtest_discover_tests lists a suite's cases once it is built.
registered=$(ctest --test-dir "$build_dir" -N | sed -n 's/^Total Tests: \([0-9][0-9]*\)$/\1/p')
if [ -z "$registered" ] || [ "$registered" -eq 0 ]; then
  echo "run-tests: no test is registered in $build_dir (is LITMUS_BUILD_TESTS off?)" >&2
  exit 1
fi

log="$build_dir/run-tests.log"
set +e
ctest --test-dir "$build_dir" -j "$jobs" --output-on-failure --timeout 600 --no-tests=error \
  2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# CTest's summary: "100% tests passed, 0 tests failed out of 812".
ran=$(sed -n 's/^.* tests failed out of \([0-9][0-9]*\)$/\1/p' "$log" | tail -n 1)
if [ "$status" -ne 0 ]; then
  echo "run-tests: ctest failed (exit $status)" >&2
  exit "$status"
fi
if [ -z "$ran" ] || [ "$ran" -ne "$registered" ]; then
  echo "run-tests: ${ran:-no} tests ran, but $registered are registered" >&2
  exit 1
fi
echo "run-tests: ran $ran of $registered registered tests"
