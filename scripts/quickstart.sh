#!/usr/bin/env bash
# The README's main-job command: installs dependencies, builds litmus, writes an example trial with
# the simulated training program (an MLP whose gradients explode), and runs the rule-evaluation
# job on it with the built-in ExplodingTensor rule (found without --plugin), printing the verdict.
# OUT (default /tmp/litmus-quickstart) receives the trial and the job's output files; BUILD_DIR
# (default ./build) the build. Tests and benchmarks are left out of this build; the README's next
# command, scripts/run-tests.sh, turns them on in the same folder and reuses what was compiled here.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/litmus-quickstart}
build_dir=${BUILD_DIR:-build}
bash scripts/install-deps.sh
BUILD_DIR="$build_dir" bash scripts/build.sh -DLITMUS_BUILD_TESTS=OFF -DLITMUS_BUILD_BENCH=OFF \
  -DLITMUS_BUILD_EXAMPLES=ON
rm -rf "$out"
mkdir -p "$out"
"$build_dir"/examples/simulated_training/simulated_training "$out/trial" --scenario exploding --steps 40
"$build_dir"/engine/cli/litmus inspect --no-values "$out/trial" > "$out/inspect.txt"
head -n 8 "$out/inspect.txt"
set +e
"$build_dir"/engine/cli/litmus run --trial "$out/trial" --rule ExplodingTensor --output-dir "$out/rule-output"
code=$?
set -e
echo "litmus run exit code: $code ($( [ $code = 1 ] && echo "IssuesFound: the rule fired" || echo "see $out/rule-output/status.json"))"
[ -f "$out/rule-output/message" ] && cat "$out/rule-output/message"
[ "$code" -le 1 ]
