# new_rule_project_test.cmake — the e2e.new_rule_project test (labels e2e, install): installs the
# build tree it runs from into a staging prefix, runs that install's `litmus new-rule`, configures
# the generated project against the prefix with CMAKE_PREFIX_PATH (as docs/first-rule.md says),
# builds it with warnings as errors, and runs its CTest test, which writes two trials and checks
# the rule's verdict on each through the installed `litmus run`. Needs the tree to be built.
# Usage: cmake -DBUILD_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCXX_COMPILER=...
#              [-DSANITIZERS=address,undefined] -P new_rule_project_test.cmake
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "failed (${rc}): ${command}\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")

set(project "${WORK_DIR}/MyFirstRule")
run("${prefix}/bin/litmus" new-rule MyFirstRule "${project}")
# The installed binary knows its prefix and prints it for CMAKE_PREFIX_PATH.
string(FIND "${run_out}" "-DCMAKE_PREFIX_PATH=${prefix}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "new-rule did not print -DCMAKE_PREFIX_PATH=${prefix}:\n${run_out}")
endif()

set(flags "-Werror")
set(link_flags "")
if(SANITIZERS)  # comma-separated, as -fsanitize takes them: the installed libraries need them
  string(APPEND flags " -fsanitize=${SANITIZERS}")
  set(link_flags "-fsanitize=${SANITIZERS}")
endif()
run("${CMAKE_COMMAND}" -S "${project}" -B "${project}/build" -G "${GENERATOR}"
    -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DCMAKE_CXX_FLAGS=${flags}" "-DCMAKE_EXE_LINKER_FLAGS=${link_flags}"
    "-DCMAKE_MODULE_LINKER_FLAGS=${link_flags}")
run("${CMAKE_COMMAND}" --build "${project}/build")
if(NOT EXISTS "${project}/build/my_first_rule.so")
  message(FATAL_ERROR "the generated project did not build my_first_rule.so")
endif()
# The generated test must use the installed litmus, not one found elsewhere on PATH.
file(STRINGS "${project}/build/CMakeCache.txt" litmus_executable REGEX "^LITMUS_EXECUTABLE:")
if(NOT litmus_executable MATCHES "${prefix}/bin/litmus")
  message(FATAL_ERROR "the generated project found another litmus: ${litmus_executable}")
endif()
run("${CMAKE_CTEST_COMMAND}" --test-dir "${project}/build" --output-on-failure --no-tests=error)
message(STATUS "${run_out}")
# The plugin's metadata, as `litmus rules` shows it.
run("${prefix}/bin/litmus" rules MyFirstRule --plugin "${project}/build/my_first_rule.so")
if(NOT run_out MATCHES "threshold +float +1\\.0")
  message(FATAL_ERROR "litmus rules does not show the threshold parameter:\n${run_out}")
endif()
message(STATUS "new-rule project test passed (${project})")
