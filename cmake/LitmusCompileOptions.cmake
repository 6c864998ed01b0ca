# Compile options for litmus's own code, as interface targets (never global flags):
#   litmus::warnings  -Wall -Wextra -Werror
#   sanitizers from LITMUS_SANITIZE are applied project-wide, since mixing instrumented and
#   uninstrumented litmus code gives false positives.
add_library(litmus_warnings INTERFACE)
add_library(litmus::warnings ALIAS litmus_warnings)
target_compile_options(litmus_warnings INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall -Wextra -Werror>
  $<$<COMPILE_LANG_AND_ID:C,GNU,Clang>:-Wall -Wextra -Werror>)

if(LITMUS_SANITIZE)
  # GCC 12's -Wmaybe-uninitialized gives false positives inside the standard library (std::regex,
  # std::optional) once sanitizers change inlining; the Release build keeps the warning.
  target_compile_options(litmus_warnings INTERFACE $<$<COMPILE_LANG_AND_ID:CXX,GNU>:-Wno-maybe-uninitialized>)
  list(JOIN LITMUS_SANITIZE "," _litmus_sanitizers)
  add_compile_options(-fsanitize=${_litmus_sanitizers} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  set(_litmus_link_sanitizers ${LITMUS_SANITIZE})
  # LITMUS_UBSAN_TRAP: UBSan's checks compiled as traps (an illegal instruction where undefined
  # behaviour happens) instead of calls into its runtime. The CI's ASan+UBSan suite uses it: the
  # runtime's check descriptors (type names, source locations) made 41 MB of .data in an
  # instrumented litmus, which LeakSanitizer scans at every process exit, and a third of an
  # instrumented file's compile time (measured: `litmus --version` 0.28-0.39 -> 0.13-0.16 s, ten
  # `litmus inspect --json` 4.8-5.3 -> 3.7 s; trial.cc 19.4 -> 16.2 s to compile). What it gives
  # up: UBSan's message (with ASAN_OPTIONS=handle_sigill=1, ASan reports the trap with a stack of
  # files and lines: where, not which check) and the vptr check, which needs the runtime.
  # Without the runtime calls nothing references libubsan, so it is not linked either.
  if(LITMUS_UBSAN_TRAP AND "undefined" IN_LIST LITMUS_SANITIZE)
    add_compile_options(-fsanitize-undefined-trap-on-error)
    list(REMOVE_ITEM _litmus_link_sanitizers undefined)
  endif()
  if(_litmus_link_sanitizers)
    list(JOIN _litmus_link_sanitizers "," _litmus_link_sanitizers)
    add_link_options(-fsanitize=${_litmus_link_sanitizers})
  endif()
  # ASan+UBSan executables without PIE: an instrumented PIE litmus carries ~1.5 million relative
  # relocations (ASan's globals, UBSan's check descriptors) that the loader applies, page fault by
  # page fault, at every start (`litmus --version` 0.36 s against 0.21 s without PIE, measured on
  # a CI-sized machine), and the sanitizer suite starts thousands of processes: a test case each,
  # every litmus and every rule worker. Plugins stay position-independent (shared objects);
  # ThreadSanitizer keeps PIE, the memory layout its runtime expects.
  if("address" IN_LIST LITMUS_SANITIZE)
    add_link_options($<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:-no-pie>)
  endif()
endif()
