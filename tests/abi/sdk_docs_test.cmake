# sdk_docs_test.cmake — the sdk.docs test: builds the SDK API reference with the project's Doxygen
# configuration (docs/sdk/Doxyfile.in, configured into DOXYFILE) into WORK_DIR and fails on any
# warning; then checks that the configuration does fail on an undocumented class, so that a
# reference that stops being warning-free cannot pass. Without doxygen it prints why and is skipped.
# Usage: cmake -DDOXYGEN=... -DDOXYFILE=... -DNEGATIVE_INPUT=... -DWORK_DIR=... -P sdk_docs_test.cmake
if(NOT DOXYGEN OR NOT EXISTS "${DOXYGEN}")
  message("SKIPPED: doxygen not found (Debian: apt-get install doxygen); the SDK reference is not checked")
  return()
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/reference" "${WORK_DIR}/negative")

# The reference itself: zero warnings.
file(WRITE "${WORK_DIR}/reference/Doxyfile" "@INCLUDE = ${DOXYFILE}\nOUTPUT_DIRECTORY = ${WORK_DIR}/reference\n")
execute_process(COMMAND "${DOXYGEN}" "${WORK_DIR}/reference/Doxyfile"
                WORKING_DIRECTORY "${WORK_DIR}/reference"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT err STREQUAL "")
  message(FATAL_ERROR "the SDK API reference has Doxygen warnings (exit ${rc}):\n${err}\n${out}")
endif()
foreach(page index.html classlitmus_1_1Rule.html classlitmus_1_1TensorView.html rule__abi_8h.html)
  if(NOT EXISTS "${WORK_DIR}/reference/html/${page}")
    message(FATAL_ERROR "the SDK API reference has no html/${page}")
  endif()
endforeach()
file(READ "${WORK_DIR}/reference/html/index.html" index)
if(NOT index MATCHES "first-rule.md")
  message(FATAL_ERROR "the reference's main page does not point to docs/first-rule.md")
endif()

# The same configuration on an undocumented class must fail.
file(WRITE "${WORK_DIR}/negative/Doxyfile"
     "@INCLUDE = ${DOXYFILE}\nOUTPUT_DIRECTORY = ${WORK_DIR}/negative\nINPUT = ${NEGATIVE_INPUT}\n"
     "USE_MDFILE_AS_MAINPAGE =\n")
execute_process(COMMAND "${DOXYGEN}" "${WORK_DIR}/negative/Doxyfile"
                WORKING_DIRECTORY "${WORK_DIR}/negative"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "Undocumented is not documented")
  message(FATAL_ERROR "Doxygen accepted an undocumented class (exit ${rc}): warnings are not fatal\n${err}")
endif()
message(STATUS "SDK API reference built without warnings: ${WORK_DIR}/reference/html/index.html")
