#!/usr/bin/env bash
# The README's main-job command: installs dependencies, builds litmus, and inspects a bundled
# example trial (one written by smdebug 1.0.34 during a PyTorch run that exploded).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh -DLITMUS_BUILD_TESTS=OFF -DLITMUS_BUILD_BENCH=OFF
./build/engine/cli/litmus inspect tests/fixtures/smdebug/pt_exploding
