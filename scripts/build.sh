#!/usr/bin/env bash
# Configures and builds litmus (Release) into ./build with Ninja. Extra arguments go to cmake's
# configure step, e.g. scripts/build.sh -DLITMUS_BUILD_BENCH=OFF. BUILD_DIR overrides ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build_dir" -j "$jobs"
