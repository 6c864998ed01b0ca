# litmus_add_rule_plugin(<name> SOURCES <src>... [OUTPUT_NAME <file name without .so>])
#
# Builds a litmus rule plugin: a MODULE library <name>.so (no "lib" prefix; the engine also finds
# lib<name>.so) from C++ and/or C sources that links only litmus::sdk, with hidden visibility and
# VISIBILITY_INLINES_HIDDEN set on the target, a version script that exports only
# litmus_plugin_entry_v1, and -z defs so a missing symbol fails the link instead of the dlopen.
# Works in-tree (included by plugin-sdk/CMakeLists.txt) and from an installed package
# (find_package(Litmus), which includes this file next to litmus_plugin.map).
include_guard(GLOBAL)

function(litmus_add_rule_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "OUTPUT_NAME" "SOURCES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "litmus_add_rule_plugin(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "litmus_add_rule_plugin(${name}): SOURCES is required")
  endif()
  if(NOT TARGET litmus::sdk)
    message(FATAL_ERROR "litmus_add_rule_plugin(${name}): litmus::sdk is not defined; "
                        "call find_package(Litmus) first")
  endif()

  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE litmus::sdk)
  # Properties on the target itself: setting CMAKE_<LANG>_VISIBILITY_PRESET after add_library
  # would have no effect.
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    CXX_STANDARD 20
    CXX_STANDARD_REQUIRED ON
    CXX_EXTENSIONS OFF)
  if(ARG_OUTPUT_NAME)
    set_target_properties(${name} PROPERTIES OUTPUT_NAME ${ARG_OUTPUT_NAME})
  endif()

  if(UNIX AND NOT APPLE)
    set(map "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/litmus_plugin.map")
    target_link_options(${name} PRIVATE "LINKER:--version-script=${map}")
    set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS "${map}")
    # -z defs: every symbol must resolve at link time (against libc, libm, libstdc++, libgcc).
    # Clang does not link its sanitizer runtimes into shared objects, so skip it there.
    set(sanitized_clang FALSE)
    if(LITMUS_SANITIZE AND (CMAKE_CXX_COMPILER_ID MATCHES "Clang" OR CMAKE_C_COMPILER_ID MATCHES "Clang"))
      set(sanitized_clang TRUE)
    endif()
    if(NOT sanitized_clang)
      target_link_options(${name} PRIVATE "LINKER:-z,defs")
    endif()
  endif()

  # Lets the ABI tests find every plugin built with this helper.
  set_property(GLOBAL APPEND PROPERTY LITMUS_RULE_PLUGIN_TARGETS ${name})
endfunction()
