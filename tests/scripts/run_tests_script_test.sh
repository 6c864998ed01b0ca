#!/usr/bin/env bash
# Checks scripts/run-tests.sh (the README's test command) on a tiny stand-in project, so that it
# runs in seconds: after a configure with scripts/quickstart.sh's options (tests off), it must turn
# the tests, benchmarks and examples back on and run every registered test; it must fail when no
# test is registered and when a test fails. Usage: run_tests_script_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1
work=$2
fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work/scripts"
cp "$src/scripts/run-tests.sh" "$src/scripts/build.sh" "$work/scripts/"
printf '#!/usr/bin/env bash\necho "install-deps: skipped in this test"\n' > "$work/scripts/install-deps.sh"
cat > "$work/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(stand_in LANGUAGES NONE)
option(LITMUS_BUILD_TESTS "" ON)
option(LITMUS_BUILD_BENCH "" ON)
option(LITMUS_BUILD_EXAMPLES "" ON)
option(STAND_IN_NO_TESTS "register no test even with LITMUS_BUILD_TESTS" OFF)
option(STAND_IN_FAILING_TEST "register a failing test" OFF)
if(LITMUS_BUILD_TESTS)
  enable_testing()
  if(NOT STAND_IN_NO_TESTS)
    foreach(i 1 2 3)
      add_test(NAME passes_${i} COMMAND ${CMAKE_COMMAND} -E true)
    endforeach()
    # The suite needs the benchmarks and examples built (bench/ and examples/ register tests).
    if(NOT LITMUS_BUILD_BENCH OR NOT LITMUS_BUILD_EXAMPLES)
      add_test(NAME needs_bench_and_examples COMMAND ${CMAKE_COMMAND} -E false)
    endif()
  endif()
  if(STAND_IN_FAILING_TEST)
    add_test(NAME fails COMMAND ${CMAKE_COMMAND} -E false)
  endif()
endif()
CMAKE

# The options scripts/quickstart.sh configures the build folder with (tests off, ...).
mapfile -t quickstart_options < <(grep -o -- '-DLITMUS_BUILD_[A-Z_]*=[A-Z]*' "$src/scripts/quickstart.sh")
echo "quickstart's options: ${quickstart_options[*]}"
[ "${#quickstart_options[@]}" -gt 0 ] || fail "no -DLITMUS_BUILD_* option found in quickstart.sh"

run() {  # run NAME: runs the stand-in's run-tests.sh, output in $work/NAME.log, exit code in $code
  set +e
  JOBS=1 bash "$work/scripts/run-tests.sh" > "$work/$1.log" 2>&1
  code=$?
  set -e
  echo "--- $1: exit $code"
  sed 's/^/    /' "$work/$1.log"
}

# 1. quickstart first, then run-tests: the whole suite must run.
cmake -S "$work" -B "$work/build" -G Ninja "${quickstart_options[@]}" > /dev/null
run after_quickstart
[ "$code" -eq 0 ] || fail "run-tests.sh after quickstart's configure exited $code"
grep -q '^run-tests: ran 3 of 3 registered tests$' "$work/after_quickstart.log" ||
  fail "run-tests.sh after quickstart's configure did not run the 3 tests"

# 2. The other order: run-tests, quickstart's configure, run-tests again.
cmake -S "$work" -B "$work/build" -G Ninja "${quickstart_options[@]}" > /dev/null
run again
[ "$code" -eq 0 ] && grep -q '^run-tests: ran 3 of 3 registered tests$' "$work/again.log" ||
  fail "run-tests.sh after run-tests.sh and quickstart's configure did not run the 3 tests"

# 3. No test registered: an error, not a pass.
cmake -S "$work" -B "$work/build" -G Ninja -DSTAND_IN_NO_TESTS=ON > /dev/null
run no_tests
[ "$code" -ne 0 ] || fail "run-tests.sh passed although no test is registered"

# 4. A failing test fails the command.
cmake -S "$work" -B "$work/build" -G Ninja -DSTAND_IN_NO_TESTS=OFF -DSTAND_IN_FAILING_TEST=ON > /dev/null
run failing
[ "$code" -ne 0 ] || fail "run-tests.sh passed although a test failed"
echo "PASS"
