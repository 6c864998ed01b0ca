# install_test.cmake — the out-of-tree build test (ctest label `install`): installs the build tree
# it runs from into a temporary prefix, builds examples/custom_rule and examples/raw_c_rule against
# it with find_package(Litmus) (-Werror, so the installed SDK compiles warning-free in a consumer),
# checks that each plugin exports only the entry, builds a writer consumer
# (tests/abi/install_consumer), and runs the installed litmus (its rules in the installed
# litmus-rule-worker). Needs the tree to be built: `cmake --install` fails otherwise.
# Usage: cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DC_COMPILER=...
#              -DCXX_COMPILER=... -DNM=... -DREADELF=... [-DSANITIZERS=address,undefined] -P install_test.cmake
include(${CMAKE_CURRENT_LIST_DIR}/check_plugin.cmake)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "failed (${rc}): ${command}\n${out}\n${err}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")

# The installed litmus runs its rules in the installed litmus-rule-worker (found relative to
# bin/litmus) and finds the installed built-in rules: ExplodingTensor fires on pt_exploding.
set(worker "${prefix}/libexec/litmus/litmus-rule-worker")
if(NOT EXISTS "${worker}")
  message(FATAL_ERROR "not installed: libexec/litmus/litmus-rule-worker")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E env SMDEBUG_TRAINING_END_DELAY_REFRESH=0
                        "${prefix}/bin/litmus" run --trial "${SOURCE_DIR}/tests/fixtures/smdebug/pt_exploding"
                        --rule ExplodingTensor --output-dir "${WORK_DIR}/run" --logging-level debug
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(REAL_PATH "${worker}" worker_real)
if(NOT rc EQUAL 1 OR NOT "${out}${err}" MATCHES "rule workers run ${worker_real}\n")
  message(FATAL_ERROR "the installed litmus did not run ExplodingTensor in ${worker} (exit ${rc}):\n${out}\n${err}")
endif()

# Every part of the C++ layer (a header missing from plugin-sdk/CMakeLists.txt's FILE_SET would
# compile in-tree and break every installed consumer).
file(GLOB sdk_parts RELATIVE "${SOURCE_DIR}/plugin-sdk/include"
     "${SOURCE_DIR}/plugin-sdk/include/litmus/rule/*.hpp")
foreach(header litmus/rule_abi.h litmus/rule.hpp ${sdk_parts} litmus/status.h litmus/format/env.h
               litmus/format/proto/event.pb.h litmus/writer/writer.h)
  if(NOT EXISTS "${prefix}/include/${header}")
    message(FATAL_ERROR "not installed: include/${header}")
  endif()
endforeach()

set(flags "")
set(link_flags "")
if(SANITIZERS)  # comma-separated, as -fsanitize takes them
  set(flags "-fsanitize=${SANITIZERS}")
  set(link_flags "-fsanitize=${SANITIZERS}")
endif()

set(common -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${prefix}"
           "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")

# Plugins: SDK only, warnings as errors.
foreach(example custom_rule:custom_gradient_rule raw_c_rule:raw_c_rule)
  string(REPLACE ":" ";" parts "${example}")
  list(GET parts 0 dir)
  list(GET parts 1 plugin)
  set(build "${WORK_DIR}/${dir}")
  run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/examples/${dir}" -B "${build}" ${common}
      "-DCMAKE_CXX_FLAGS=-Werror" "-DCMAKE_C_FLAGS=-Werror")
  run("${CMAKE_COMMAND}" --build "${build}")
  litmus_check_plugin("${build}/${plugin}.so" exports "${NM}" "${READELF}" "")
  litmus_check_plugin("${build}/${plugin}.so" needed "${NM}" "${READELF}" "")
endforeach()

# The writer libraries, generated headers, version file.
set(build "${WORK_DIR}/consumer")
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/tests/abi/install_consumer" -B "${build}" ${common}
    "-DCMAKE_CXX_FLAGS=${flags}" "-DCMAKE_EXE_LINKER_FLAGS=${link_flags}")
run("${CMAKE_COMMAND}" --build "${build}")

# SameMajorVersion: another major must not be found.
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/tests/abi/install_consumer"
                        -B "${WORK_DIR}/consumer-major" ${common} -DLITMUS_REQUESTED_VERSION=99
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "find_package(Litmus 99) succeeded against litmus ${prefix}")
endif()
message(STATUS "install test passed (${prefix})")
