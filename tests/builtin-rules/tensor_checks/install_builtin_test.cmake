# install_builtin_test.cmake — the built-in rules of an installed litmus (ctest label `install`):
# installs the build tree into a temporary prefix outside it (an installed binary inside the build
# tree would also search the build tree), then runs the installed `litmus` with no plugin option
# and an empty LITMUS_PLUGIN_PATH: `litmus rules vanishing_gradient` must describe the rule from
# <prefix>/<libdir>/litmus/plugins, and `litmus run --rule ExplodingTensor` must fire on the
# pt_exploding fixture at step 7. Needs the whole tree built, as `cmake --install` does.
# Usage: cmake -DBUILD_DIR=... -DFIXTURE=... -DLIBDIR=... -P install_builtin_test.cmake
if(DEFINED ENV{TMPDIR} AND IS_DIRECTORY "$ENV{TMPDIR}")
  set(tmp "$ENV{TMPDIR}")
else()
  set(tmp "/tmp")
endif()
string(RANDOM LENGTH 10 suffix)
set(prefix "${tmp}/litmus-install-test-${suffix}")

function(fail message)
  file(REMOVE_RECURSE "${prefix}")
  message(FATAL_ERROR "${message}")
endfunction()

function(run out_var expected_rc)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LITMUS_PLUGIN_PATH= SMDEBUG_TRAINING_END_DELAY_REFRESH=0 ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expected_rc)
    list(JOIN ARGN " " command)
    fail("exit code ${rc}, expected ${expected_rc}: ${command}\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}"
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  fail("cmake --install failed (${rc}): ${err}")
endif()
set(plugin "${prefix}/${LIBDIR}/litmus/plugins/litmus_tensor_checks.so")
if(NOT EXISTS "${plugin}")
  fail("not installed: ${plugin}")
endif()
set(litmus "${prefix}/bin/litmus")

run(listing 0 "${litmus}" rules)
if(NOT listing MATCHES "\nExplodingTensor +litmus_tensor_checks +Fires when")
  fail("litmus rules does not list ExplodingTensor:\n${listing}")
endif()
run(described 0 "${litmus}" rules vanishing_gradient)
string(FIND "${described}" "plugin: litmus_tensor_checks (${plugin})" at)
if(at EQUAL -1 OR NOT described MATCHES "\n +threshold +float +0\\.0000001 +")
  fail("litmus rules vanishing_gradient does not describe the installed rule:\n${described}")
endif()

set(out "${prefix}/rule-output")
run(ignored 1 "${litmus}" run --trial "${FIXTURE}" --rule ExplodingTensor --output-dir "${out}"
    --message-file "${out}/message" --failure-file "${out}/failure" --poll-interval-ms 20)
file(READ "${out}/message" message)
if(NOT message MATCHES "Evaluation of the rule ExplodingTensor at step 7 resulted in the condition being met")
  fail("unexpected message: ${message}")
endif()

file(REMOVE_RECURSE "${prefix}")
message(STATUS "installed built-in rules found (${plugin})")
