# compile_fail_test.cmake — LITMUS_RULE_PLUGIN's compile-time checks: every compile_fail/*.cc must
# fail to compile with the message in its "// EXPECT: <regex>" line; files marked
# "// EXPECT-SUCCESS" must compile (the control).
# Usage: cmake -DCXX=<compiler> -DINCLUDE_DIR=<plugin-sdk/include> -DCASES_DIR=<dir> -P ...
file(GLOB cases "${CASES_DIR}/*.cc")
list(LENGTH cases count)
if(count EQUAL 0)
  message(FATAL_ERROR "no cases in ${CASES_DIR}")
endif()
foreach(case IN LISTS cases)
  file(READ "${case}" text)
  execute_process(COMMAND "${CXX}" -std=c++20 -fsyntax-only -Wall -Wextra -Werror
                          "-I${INCLUDE_DIR}" "${case}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  get_filename_component(name "${case}" NAME)
  if(text MATCHES "// EXPECT-SUCCESS")
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${name} should compile:\n${err}")
    endif()
  elseif(text MATCHES "// EXPECT: ([^\n]+)")
    set(expected "${CMAKE_MATCH_1}")
    if(rc EQUAL 0)
      message(FATAL_ERROR "${name} compiled, but must fail with: ${expected}")
    endif()
    if(NOT err MATCHES "${expected}")
      message(FATAL_ERROR "${name} failed without '${expected}':\n${err}")
    endif()
  else()
    message(FATAL_ERROR "${name} has no // EXPECT line")
  endif()
  message(STATUS "${name}: ok")
endforeach()
