#!/usr/bin/env bash
# Runs litmus's benchmarks and prints every result as a ratio to a baseline measured in the same
# run (docs/benchmarks.md). Usage: bench/run-bench.sh BUILD_DIR [smoke|full] [WORK_DIR]
#   smoke: small trials, a few seconds (CI);  full: the benchmark shapes of the issues
#          (100 steps x 50 x 1 MiB and 2000 steps x 200 x 4 KiB float32; ~7 GB of disk).
set -euo pipefail
build=${1:?usage: bench/run-bench.sh BUILD_DIR [smoke|full|scale] [WORK_DIR]}
size=${2:-smoke}
work=${3:-$(mktemp -d "${TMPDIR:-/tmp}/litmus-bench.XXXXXX")}
litmus="$build/engine/cli/litmus"
plugin="$build/examples/custom_rule/custom_gradient_rule.so"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

case "$size" in
  smoke) big="--steps 10 --tensors 10 --elements 262144 --hot 3 --nan 5"
         small="--steps 100 --tensors 20 --elements 1024 --hot 30 --inf 60"
         latency_steps=3 ;;
  full|scale)
         big="--steps 100 --tensors 50 --elements 262144 --hot 10,50,90 --nan 25,75 --inf 60"
         small="--steps 2000 --tensors 200 --elements 1024 --hot 100,1000 --nan 500"
         latency_steps=10 ;;
  *) echo "unknown size $size (smoke, full or scale)" >&2; exit 2 ;;
esac
base=$([ "$size" = smoke ] && echo smoke || echo full)  # the size of the benches without a scale size

now() { date +%s.%N; }
# Plain reading of every event file of a trial (the baseline), warm page cache.
plain_read() { find "$1/events" -name '*.tfevents' -print0 | xargs -0 cat > /dev/null; }

run_shape() {
  local name=$1; shift
  local trial="$work/$name"
  echo "== $name: make_trial $*"
  "$build/bench/make_trial" "$trial" "$@" > /dev/null
  sync  # the fresh trial's writeback would otherwise run during the measurements
  plain_read "$trial"  # warm the page cache
  "$build/bench/scan_bench" "$trial" --repeat 3
  local best_plain=1e9 best_run=1e9 t0 t1 t2 code
  for _ in 1 2 3; do
    t0=$(now); plain_read "$trial"; t1=$(now)
    set +e
    "$litmus" run --trial "$trial" --plugin "$plugin" \
      --rule CustomGradientRule --param threshold=0.5 --keep-going --logging-level error \
      --output-dir "$work/out-$name" --message-file "$work/out-$name/message" \
      --failure-file "$work/out-$name/failure" > /dev/null  # (the verdict table)
    code=$?
    set -e
    t2=$(now)
    [ "$code" -le 1 ] || { echo "litmus run failed with exit code $code" >&2; exit 1; }
    best_plain=$(awk -v a="$t0" -v b="$t1" -v m="$best_plain" 'BEGIN { d = b - a; print (d < m) ? d : m }')
    best_run=$(awk -v a="$t1" -v b="$t2" -v m="$best_run" 'BEGIN { d = b - a; print (d < m) ? d : m }')
  done
  awk -v p="$best_plain" -v r="$best_run" -v n="$name" \
    'BEGIN { printf "litmus run (CustomGradientRule, threshold 0.5) on %s: %.3f s; plain read %.3f s; ratio run/plain %.2f\n", n, r, p, r / p }'
  if [ "$name" = big ]; then run_builtin_rules "$name" "$trial"; fi
  run_output_cost "$name" CustomGradientRule "$trial" --plugin "$plugin" --rule CustomGradientRule \
    --param threshold=0.5
  rm -rf "$trial" "$work/out-$name"
}

# Issue 17: what publishing series and writing the by-products cost. The same job (every step
# evaluated) as a "bare" run (--no-series, neither report nor TensorBoard) and with, in turn, the
# series kept (the default), plus a TensorBoard file (with the losses), plus the HTML report, and
# all of them; runs alternate, best of 5 each; wall time and CPU time (user + system, of litmus and
# its rule workers), each as a ratio to the bare run (target: all of them <= 1.05).
run_output_cost() {
  local name=$1 label=$2; shift 2
  local trial=$1; shift
  local out="$work/out-cost-$name" kinds=(bare series tensorboard report all) kind t0 t1 c0 c1 code
  local -A wall cpu
  for kind in "${kinds[@]}"; do wall[$kind]=1e9; cpu[$kind]=1e9; done
  for _ in 1 2 3 4 5; do
    for kind in "${kinds[@]}"; do
      rm -rf "$out"
      local extra=()
      case $kind in
        bare) extra=(--no-series) ;;
        tensorboard) extra=(--tensorboard-dir "$out/tb" --tensorboard-losses) ;;
        report) extra=(--report "$out/report.html") ;;
        all) extra=(--report "$out/report.html" --tensorboard-dir "$out/tb" --tensorboard-losses) ;;
      esac
      c0=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat)
      t0=$(now)
      set +e
      "$litmus" run --trial "$trial" "$@" --keep-going --logging-level error "${extra[@]}" \
        --output-dir "$out" --message-file "$out/message" --failure-file "$out/failure" > /dev/null
      code=$?
      set -e
      t1=$(now)
      c1=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat)
      [ "$code" -le 1 ] || { echo "litmus run ($label, $kind) failed with exit code $code" >&2; exit 1; }
      case $kind in
        report|all) [ -s "$out/report.html" ] || { echo "no report from the $kind run" >&2; exit 1; } ;;
      esac
      wall[$kind]=$(awk -v a="$t0" -v b="$t1" -v m="${wall[$kind]}" 'BEGIN { d = b - a; print (d < m) ? d : m }')
      cpu[$kind]=$(awk -v a="$c0" -v b="$c1" -v m="${cpu[$kind]}" 'BEGIN { d = b - a; print (d < m) ? d : m }')
    done
  done
  local hz line; hz=$(getconf CLK_TCK)
  line="what rules publish and the by-products ($label, --keep-going) on $name: bare (--no-series) $(awk -v w="${wall[bare]}" -v c="${cpu[bare]}" -v hz="$hz" 'BEGIN { printf "%.3f s, CPU %.2f s", w, c / hz }')"
  for kind in series tensorboard report all; do
    line+="; $kind $(awk -v w="${wall[$kind]}" -v c="${cpu[$kind]}" -v bw="${wall[bare]}" -v bc="${cpu[bare]}" \
      'BEGIN { printf "%.3fx (CPU %.3fx)", w / bw, (bc > 0 ? c / bc : 0) }')"
  done
  echo "$line (target <= 1.05)"
  rm -rf "$out"
}

# Five per-step built-in rules in one job (one reader, one decoded copy of each tensor per step),
# every step evaluated (--keep-going), against plain reading of the same files; best of 3 each.
# TensorVariance gets a bound no tensor reaches, so that it computes every variance.
run_builtin_rules() {
  local name=$1 trial=$2 out="$work/out-builtin-$1"
  local yaml="$work/builtin-$1.yaml"
  cat > "$yaml" <<EOF
trial: $trial
rules:
  - {name: vanishing, rule: VanishingGradient}
  - {name: exploding, rule: ExplodingTensor}
  - {name: all-zero, rule: AllZero}
  - {name: variance, rule: TensorVariance, parameters: {max_threshold: "1e30"}}
  - {name: unchanged, rule: UnchangedTensor}
EOF
  local best_plain=1e9 best_run=1e9 t0 t1 t2 code
  for _ in 1 2 3; do
    t0=$(now); plain_read "$trial"; t1=$(now)
    set +e
    "$litmus" run --config "$yaml" --keep-going --logging-level error \
      --output-dir "$out" --message-file "$out/message" --failure-file "$out/failure" > /dev/null
    code=$?
    set -e
    t2=$(now)
    [ "$code" -le 1 ] || { echo "litmus run (built-in rules) failed with exit code $code" >&2; exit 1; }
    best_plain=$(awk -v a="$t0" -v b="$t1" -v m="$best_plain" 'BEGIN { d = b - a; print (d < m) ? d : m }')
    best_run=$(awk -v a="$t1" -v b="$t2" -v m="$best_run" 'BEGIN { d = b - a; print (d < m) ? d : m }')
  done
  awk -v p="$best_plain" -v r="$best_run" -v n="$name" \
    'BEGIN { printf "litmus run --config (VanishingGradient, ExplodingTensor, AllZero, TensorVariance, UnchangedTensor) on %s: %.3f s; plain read %.3f s; ratio run/plain %.2f (target <= 2)\n", n, r, p, r / p }'
  run_output_cost "$name" "five built-in rules" "$trial" --config "$yaml"
  rm -rf "$out" "$yaml"
}

# Issue 16: all 20 built-in rules in one job, every step evaluated, on two shapes of small tensors
# and many steps: a trial that feeds them all (simulated_training --feed-all-rules; target <= 2x a
# plain read) and simulated_training's plain healthy run, where several rules find nothing to
# read (TreeDepth without trees, ...; target <= 3x, <= 2 us per rule and step). Rules in worker
# processes (the default: up to 16 steps per call), in-process, and in worker processes with one
# step per call (--rule-batch-steps 1), against plain reading of the same files; best of 3,
# alternating. Prints each as a ratio to the plain read and as microseconds per rule and step.
# shellcheck source=bench/all-builtin-rules.sh
source "$(dirname "$0")/all-builtin-rules.sh"
run_all_builtin_rules() {
  local steps=$1 shape=$2 trial="$work/all-rules-trial" out="$work/out-all-rules" yaml="$work/all-rules.yaml"
  local feed=() target="<= 3x, <= 2 us"
  if [ "$shape" = fed ]; then
    feed=(--feed-all-rules)
    target="<= 2x"
  fi
  echo "== 20 built-in rules ($shape): simulated_training --scenario healthy ${feed[*]:+${feed[*]} }--steps $steps"
  "$build/examples/simulated_training/simulated_training" "$trial" --scenario healthy "${feed[@]}" \
    --steps "$steps" > /dev/null
  sync
  all_rules_yaml "$trial" > "$yaml"
  local global_steps files bytes
  global_steps=$(find "$trial/index" -name '*.json' | wc -l)
  files=$(find "$trial/events" -name '*.tfevents' | wc -l)
  bytes=$(find "$trial/events" -name '*.tfevents' -printf '%s\n' | awk '{ s += $1 } END { print s }')
  plain_read "$trial"
  local -A best=([plain]=1e9 [process]=1e9 [none]=1e9 [batch]=1e9)
  local kind t0 t1 code
  for _ in 1 2 3; do
    for kind in plain process none batch; do
      rm -rf "$out"
      t0=$(now)
      if [ "$kind" = plain ]; then
        plain_read "$trial"
      else
        set +e
        if [ "$kind" = batch ]; then
          "$litmus" run --config "$yaml" --isolation process --rule-batch-steps 1 --keep-going --logging-level error \
            --output-dir "$out" --message-file "$out/message" --failure-file "$out/failure" > /dev/null
        else
          "$litmus" run --config "$yaml" --isolation "$kind" --keep-going --logging-level error \
            --output-dir "$out" --message-file "$out/message" --failure-file "$out/failure" > /dev/null
        fi
        code=$?
        set -e
        [ "$code" -le 1 ] || { echo "litmus run (20 built-in rules, $kind) failed with exit code $code" >&2; exit 1; }
      fi
      t1=$(now)
      best[$kind]=$(awk -v a="$t0" -v b="$t1" -v m="${best[$kind]}" 'BEGIN { d = b - a; print (d < m) ? d : m }')
    done
  done
  awk -v p="${best[plain]}" -v i="${best[process]}" -v n="${best[none]}" -v s="$global_steps" -v f="$files" -v b="$bytes" \
    -v shape="$shape" -v target="$target" \
    'BEGIN { printf "20 built-in rules, %s trial, %d steps (%d files, %.0f MB): plain read %.3f s; isolated %.3f s = %.2fx plain, %.1f us per rule and step; --isolation none %.3f s = %.2fx plain, %.1f us per rule and step (target %s)\n", shape, s, f, b / 1e6, p, i, i / p, i / (20 * s) * 1e6, n, n / p, n / (20 * s) * 1e6, target }'
  awk -v p="${best[plain]}" -v i="${best[batch]}" -v s="$global_steps" \
    'BEGIN { printf "  isolated, one step per call (--rule-batch-steps 1; the default is 16): %.3f s = %.2fx plain, %.1f us per rule and step\n", i, i / p, i / (20 * s) * 1e6 }'
  rm -rf "$out" "$yaml" "$trial"
}

run_shape big $big
run_shape small $small
run_all_builtin_rules "$([ "$size" = smoke ] && echo 200 || echo 6000)" fed
run_all_builtin_rules "$([ "$size" = smoke ] && echo 200 || echo 6000)" plain

echo "== writer"
"$build/bench/writer_bench" "$work/writer" $([ "$size" = smoke ] && echo --smoke)

echo "== latency (index file -> event line; end marker -> exit)"
"$build/bench/latency_bench" "$litmus" "$plugin" --poll-interval-ms 1000 --steps "$latency_steps"
"$build/bench/latency_bench" "$litmus" "$plugin" --poll-interval-ms 10 --steps "$latency_steps"

if [ -d "$build/python/litmus" ]; then
  # The Python package and rule host (docs/python.md), with the interpreter CMake built them for.
  python=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")
  "${python:-python3}" "$(dirname "$0")/python_bench.py" "$build" "$base" --work-dir "$work/python"
fi

echo "== S3 (local S3 test server)"
"$(dirname "$0")/s3-bench.sh" "$build" "$base"

"$(dirname "$0")/scale-bench.sh" "$build" "$size" "$work/scale"
