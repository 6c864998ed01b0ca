#!/usr/bin/env bash
# The cost of rule isolation (docs/run.md "Isolation and limits"): `litmus run` with rules in
# worker processes (the default) against `--isolation none`, on the benchmark shapes, for
# CustomGradientRule alone and for the 20 built-in rules in one job. Best of N runs each,
# alternating the modes; prints each as a ratio isolated/in-process (docs/benchmarks.md).
# Usage: bench/isolation-bench.sh BUILD_DIR [smoke|full] [WORK_DIR] [RUNS]
set -euo pipefail
build=${1:?usage: bench/isolation-bench.sh BUILD_DIR [smoke|full] [WORK_DIR] [RUNS]}
size=${2:-smoke}
work=${3:-$(mktemp -d "${TMPDIR:-/tmp}/litmus-isolation-bench.XXXXXX")}
runs=${4:-3}
litmus="$build/engine/cli/litmus"
plugin="$build/examples/custom_rule/custom_gradient_rule.so"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

case "$size" in
  smoke) big="--steps 10 --tensors 10 --elements 262144 --hot 3 --nan 5"
         small="--steps 100 --tensors 20 --elements 1024 --hot 30 --inf 60" ;;
  full)  big="--steps 100 --tensors 50 --elements 262144 --hot 10,50,90 --nan 25,75 --inf 60"
         small="--steps 2000 --tensors 200 --elements 1024 --hot 100,1000 --nan 500" ;;
  *) echo "unknown size $size (smoke or full)" >&2; exit 2 ;;
esac

now() { date +%s.%N; }

# Best wall time of `litmus run ARGS... --isolation MODE` over $runs runs (exit 0 or 1 expected).
best_of() {
  local mode=$1; shift
  local best=1e9 t0 t1 code out="$work/out"
  for _ in $(seq "$runs"); do
    rm -rf "$out"
    t0=$(now)
    set +e
    SMDEBUG_TRAINING_END_DELAY_REFRESH=0 "$litmus" run "$@" --isolation "$mode" --keep-going --logging-level error \
      --output-dir "$out" --message-file "$out/message" --failure-file "$out/failure" > /dev/null  # (the verdict table)
    code=$?
    set -e
    t1=$(now)
    [ "$code" -le 1 ] || { echo "litmus run --isolation $mode failed with exit code $code" >&2; exit 1; }
    best=$(awk -v a="$t0" -v b="$t1" -v m="$best" 'BEGIN { d = b - a; print (d < m) ? d : m }')
  done
  echo "$best"
}

compare() {
  local what=$1; shift
  local none process
  none=$(best_of none "$@")
  process=$(best_of process "$@")
  awk -v n="$none" -v p="$process" -v w="$what" \
    'BEGIN { printf "%s: in-process %.3f s, isolated %.3f s, ratio isolated/in-process %.3f\n", w, n, p, p / n }'
}

# shellcheck source=bench/all-builtin-rules.sh
source "$(dirname "$0")/all-builtin-rules.sh"

for shape in big small; do
  trial="$work/$shape"
  args=${!shape}
  echo "== $shape: make_trial $args"
  # shellcheck disable=SC2086
  "$build/bench/make_trial" "$trial" $args > /dev/null
  sync
  find "$trial/events" -name '*.tfevents' -print0 | xargs -0 cat > /dev/null  # warm the page cache
  compare "CustomGradientRule on $shape" --trial "$trial" --plugin "$plugin" --rule CustomGradientRule \
    --param threshold=0.5
  all_rules_yaml "$trial" > "$work/all-rules.yaml"
  compare "20 built-in rules on $shape" --config "$work/all-rules.yaml"
  rm -rf "$trial"
done
