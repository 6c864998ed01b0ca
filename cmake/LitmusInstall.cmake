# Install and export rules (included from the top-level CMakeLists.txt when LITMUS_INSTALL is ON).
# find_package(Litmus) from the install prefix then gives:
#   component sdk     litmus::sdk (headers rule_abi.h, rule.hpp, rule/*.hpp) and litmus_add_rule_plugin()
#   component writer  litmus::writer and litmus::format (static; need Protobuf and Threads)
# No components requested means both. litmus::engine_core and the CLI stay private.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(LITMUS_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Litmus)

# ---- SDK: header-only target, plugin helper and its version script.
install(TARGETS litmus_sdk EXPORT LitmusSdkTargets FILE_SET HEADERS)
install(EXPORT LitmusSdkTargets NAMESPACE litmus:: DESTINATION ${LITMUS_INSTALL_CMAKEDIR})
install(FILES
  ${PROJECT_SOURCE_DIR}/plugin-sdk/cmake/LitmusPluginHelpers.cmake
  ${PROJECT_SOURCE_DIR}/plugin-sdk/cmake/litmus_plugin.map
  DESTINATION ${LITMUS_INSTALL_CMAKEDIR})

# ---- Writer and format: libraries, public headers, generated protobuf headers.
# litmus_format links litmus::warnings PRIVATE; for a static library CMake exports that as a
# link-only dependency, so the (compile-options-only) interface target is exported too. Its
# exported name differs from the in-tree litmus::warnings so consumers never mistake it for
# being in-tree, and link-only use carries no compile options.
set_target_properties(litmus_warnings PROPERTIES EXPORT_NAME internal_warnings)
install(TARGETS litmus_format litmus_writer litmus_warnings EXPORT LitmusWriterTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT LitmusWriterTargets NAMESPACE litmus:: DESTINATION ${LITMUS_INSTALL_CMAKEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/writer/format/include/ ${PROJECT_SOURCE_DIR}/writer/include/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# protoc writes litmus/format/proto/*.pb.h below writer/format's binary dir (see
# writer/format/proto/CMakeLists.txt); they are included as "litmus/format/proto/x.pb.h".
get_target_property(_litmus_format_binary_dir litmus_format BINARY_DIR)
install(DIRECTORY ${_litmus_format_binary_dir}/proto/litmus
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.pb.h")

# ---- Package configuration.
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/LitmusConfig.cmake.in
  ${PROJECT_BINARY_DIR}/LitmusConfig.cmake
  INSTALL_DESTINATION ${LITMUS_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/LitmusConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/LitmusConfig.cmake ${PROJECT_BINARY_DIR}/LitmusConfigVersion.cmake
  DESTINATION ${LITMUS_INSTALL_CMAKEDIR})
