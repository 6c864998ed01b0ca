#!/usr/bin/env bash
# Peak RSS of `litmus run` (AllZero), `litmus inspect` (the overview, which reads and checks every
# record), `litmus inspect --values`, `litmus inspect --json --no-values` and `litmus inspect --json`
# (with values; it and --values spill each tensor's part of each index folder to a temporary
# file under WORK_DIR's TMPDIR, ~2 KB and ~0.3 KB per record: at the default 100k steps ~10 GB
# and ~5 min of CPU for `--json`) on
# two trials of small tensors that differ only in their number of steps, and the growth between
# them in bytes per (step, tensor) record: the catalog's resident cost (issue 16 item 2: <= 20).
# Usage: bench/memory-bench.sh BUILD_DIR [STEPS_SMALL STEPS_LARGE [TENSORS [WORK_DIR]]]
#   defaults: 20000 and 100000 steps x 50 tensors x 16 float32 (~0.5 and ~2.3 GB of disk, most
#   of it file-system blocks of small files; making the large one takes ~1 min), made in a
#   temporary folder under WORK_DIR (default $TMPDIR or /tmp) and removed at the end.
# Needs GNU time (/usr/bin/time) and the build's tensor_checks plugin (AllZero).
set -euo pipefail
build=${1:?usage: bench/memory-bench.sh BUILD_DIR [STEPS_SMALL STEPS_LARGE [TENSORS [WORK_DIR]]]}
small=${2:-20000}
large=${3:-100000}
tensors=${4:-50}
parent=${5:-${TMPDIR:-/tmp}}
mkdir -p "$parent"
work=$(mktemp -d "$parent/litmus-memory-bench.XXXXXX")  # (removed at exit, trials and all)
trap 'rm -rf "$work"' EXIT
litmus="$build/engine/cli/litmus"
plugin="$build/builtin-rules/litmus_tensor_checks.so"

# peak_kb COMMAND...: the command's peak RSS in KiB (its output discarded).
peak_kb() {
  /usr/bin/time -o "$work/time" -f '%M' "$@" > /dev/null 2> "$work/stderr" || {
    echo "failed: $* ($(tail -n 1 "$work/stderr"))" >&2
    return 1
  }
  tail -n 1 "$work/time"
}

declare -A kb
for steps in "$small" "$large"; do
  trial="$work/trial-$steps"
  "$build/bench/make_trial" "$trial" --steps "$steps" --tensors "$tensors" --elements 16 > /dev/null
  kb[run,$steps]=$(peak_kb "$litmus" run --trial "$trial" --rule AllZero --plugin "$plugin" \
                     --output-dir "$work/out" --fresh)
  kb[inspect,$steps]=$(peak_kb "$litmus" inspect "$trial")
  kb[values,$steps]=$(TMPDIR="$work" peak_kb "$litmus" inspect "$trial" --values)
  kb[json,$steps]=$(peak_kb "$litmus" inspect "$trial" --json --no-values)
  kb[jsonvalues,$steps]=$(TMPDIR="$work" peak_kb "$litmus" inspect "$trial" --json)
  rm -rf "$trial" "$work/out"
done

records=$(( (large - small) * tensors ))
printf '%-34s %12s %12s %14s\n' "peak RSS (MB), $tensors x 16 float32" "$small steps" "$large steps" "bytes/record"
for what in run inspect values json jsonvalues; do
  case $what in
    run) label="run --rule AllZero" ;;
    inspect) label="inspect" ;;
    values) label="inspect --values" ;;
    json) label="inspect --json --no-values" ;;
    jsonvalues) label="inspect --json" ;;
  esac
  a=${kb[$what,$small]} b=${kb[$what,$large]}
  awk -v l="$label" -v a="$a" -v b="$b" -v r="$records" \
    'BEGIN { printf "%-34s %12.1f %12.1f %14.1f\n", l, a / 1024, b / 1024, (b - a) * 1024 / r }'
done
