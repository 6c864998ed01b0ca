#!/usr/bin/env bash
# stage-runtime.sh BUILD_DIR STAGE_DIR: the file tree of the litmus runtime image, from a built
# tree. Installs BUILD_DIR (cmake --install) into a temporary prefix and copies into STAGE_DIR only:
#   usr/local/bin/litmus, usr/local/libexec/litmus/litmus-rule-worker (the program rules run in),
#   usr/local/lib/litmus/plugins/*.so (the built-in rules),
#   usr/local/bin/litmus-sidecar (the Kubernetes native-sidecar wrapper beside this script),
#   the plugin SDK (usr/local/include/litmus/rule*, usr/local/lib/cmake/Litmus: COMPONENTS sdk),
#   usr/local/lib/litmus/deps/: every shared library ldd finds for litmus and the plugins, and
#     libcurl.so.4 with its own (litmus loads it when a job first uses S3 or HTTP), except
#     glibc's and the C++ runtime's (the Debian 12 base image has those),
#   etc/ld.so.conf.d/litmus.conf (that folder for the loader; the image runs ldconfig),
#   etc/ssl/certs/ca-certificates.crt (HTTPS to S3, EventBridge, SageMaker),
#   usr/local/share/litmus/image-info (version and plugin ABI).
# Used by deploy/container/Containerfile's build stage, and by CI on its own build
# (tests/deploy/container_image_test.sh) so that the image test does not compile litmus again.
set -euo pipefail
build_dir=$(cd "$1" && pwd)
stage=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build_dir" --prefix "$prefix/usr/local" > /dev/null

rm -rf "$stage"
mkdir -p "$stage/usr/local/bin" "$stage/usr/local/libexec/litmus" "$stage/usr/local/lib/litmus/deps" "$stage/usr/local/include/litmus" \
  "$stage/usr/local/lib/cmake/Litmus" "$stage/etc/ld.so.conf.d" "$stage/etc/ssl/certs" "$stage/usr/local/share/litmus"
cp -a "$prefix/usr/local/bin/litmus" "$stage/usr/local/bin/"
cp -a "$prefix/usr/local/libexec/litmus/litmus-rule-worker" "$stage/usr/local/libexec/litmus/"
install -m 0755 "$(dirname "$0")/litmus-sidecar" "$stage/usr/local/bin/litmus-sidecar"
cp -a "$prefix/usr/local/lib/litmus/plugins" "$stage/usr/local/lib/litmus/"
cp -a "$prefix/usr/local/include/litmus/rule_abi.h" "$prefix/usr/local/include/litmus/rule.hpp" \
  "$prefix/usr/local/include/litmus/rule" "$stage/usr/local/include/litmus/"
cp -a "$prefix"/usr/local/lib/cmake/Litmus/{LitmusConfig.cmake,LitmusConfigVersion.cmake,LitmusPluginHelpers.cmake,litmus_plugin.map} \
  "$prefix"/usr/local/lib/cmake/Litmus/LitmusSdkTargets*.cmake "$stage/usr/local/lib/cmake/Litmus/"
strip --strip-unneeded "$stage/usr/local/bin/litmus" "$stage/usr/local/libexec/litmus/litmus-rule-worker" \
  "$stage"/usr/local/lib/litmus/plugins/*.so

# Shared libraries: what the dynamic loader resolves here, minus what every Debian 12 image has.
# libcurl is loaded at run time (engine/aws/src/curl_library.h), so ldd of litmus does not show it.
skip='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libanl|libstdc\+\+|libgcc_s)\.so'
# (awk reads to the end: leaving early would end ldconfig with SIGPIPE, which pipefail and set -e
# turned into a silent failure of this script whenever ldconfig had not finished writing.)
curl=$("$(command -v ldconfig || echo /sbin/ldconfig)" -p |
  awk '$1 == "libcurl.so.4" && /x86-64|x86_64|64bit/ && !found { print $NF; found = 1 }')
[ -n "$curl" ] || { echo "stage-runtime.sh: libcurl.so.4 not found (apt-get install libcurl4)" >&2; exit 1; }
for binary in "$stage/usr/local/bin/litmus" "$stage/usr/local/libexec/litmus/litmus-rule-worker" \
  "$stage"/usr/local/lib/litmus/plugins/*.so "$curl"; do
  ldd "$binary" | awk '/=> \// { print $1, $3 }'
done | { cat; echo "libcurl.so.4 $curl"; } | sort -u | while read -r soname path; do
  if [[ "$soname" =~ $skip ]]; then continue; fi
  cp -L "$path" "$stage/usr/local/lib/litmus/deps/$soname"
done
for binary in "$stage/usr/local/bin/litmus" "$stage/usr/local/libexec/litmus/litmus-rule-worker"; do
  if ldd "$binary" | grep -q 'not found'; then
    echo "stage-runtime.sh: ${binary##*/} has unresolved libraries:" >&2
    ldd "$binary" | grep 'not found' >&2
    exit 1
  fi
done
echo /usr/local/lib/litmus/deps > "$stage/etc/ld.so.conf.d/litmus.conf"
cp -L /etc/ssl/certs/ca-certificates.crt "$stage/etc/ssl/certs/ca-certificates.crt"

source_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build_dir/CMakeCache.txt")
abi_major=$(sed -n 's/^#define LITMUS_ABI_MAJOR \([0-9]*\).*/\1/p' "$source_dir/plugin-sdk/include/litmus/rule_abi.h")
abi_minor=$(sed -n 's/^#define LITMUS_ABI_MINOR \([0-9]*\).*/\1/p' "$source_dir/plugin-sdk/include/litmus/rule_abi.h")
{
  echo "version=$("$stage/usr/local/bin/litmus" --version | awk '{ print $2 }')"
  echo "plugin_abi=$abi_major.$abi_minor"
} > "$stage/usr/local/share/litmus/image-info"
echo "staged $(du -sh "$stage" | cut -f1) in $stage"
