#!/usr/bin/env bash
# Scale benchmark (issue 16, docs/benchmarks.md "Scale"): time and peak RSS of `litmus run` (AllZero,
# every step, the default environment) on trials of many steps, many tensors and many workers,
# with the ratio to plainly reading the same event files (cat; curl for S3), and the cost of one
# idle poll of a live trial (bench/poll_bench: CPU, listing calls, S3 requests).
# Usage: bench/scale-bench.sh BUILD_DIR [smoke|full|scale] [WORK_DIR]
#   smoke: tiny shapes, seconds (CI; no S3);
#   full:  1k, 10k, 100k steps x 50 tensors x 16 float32 (also the poll-cost trials), 200 steps x
#          10k tensors, 64 workers x 2k steps x 50 tensors, 10k steps on the local S3 test server;
#          ~3 GB of disk at a time, several minutes; redraws docs/benchmarks-scale.png (gnuplot);
#   scale: full plus 1M steps x 50 x 16 (~25 GB of disk, ~10 min to write on a 2-core VM with a
#          busy disk) and the S3 shape at 100k steps (200k uploads, many minutes).
# Each trial is deleted after its measurements. Peak RSS is GNU time's %M: the largest process
# (litmus, or a rule's worker process), not their sum.
# Environment: LITMUS_SCALE_S3_PORT (default 17690), LITMUS_SCALE_PLOT (PNG to write; default
# docs/benchmarks-scale.png for full and scale, none for smoke).
set -euo pipefail
build=${1:?usage: bench/scale-bench.sh BUILD_DIR [smoke|full|scale] [WORK_DIR]}
size=${2:-smoke}
work=${3:-$(mktemp -d "${TMPDIR:-/tmp}/litmus-scale.XXXXXX")}
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$build" && pwd)
litmus="$build/engine/cli/litmus"
make_trial="$build/bench/make_trial"
port=${LITMUS_SCALE_S3_PORT:-17690}
server="$here/../scripts/s3-test-server.sh"

case "$size" in
  smoke) series="200 1000"; tensors_shape="--steps 20 --tensors 2000"; workers_shape="--steps 100 --workers 4"
         s3_steps=""; plot=${LITMUS_SCALE_PLOT:-} ;;
  full)  series="1000 10000 100000"; tensors_shape="--steps 200 --tensors 10000"
         workers_shape="--steps 2000 --workers 64"; s3_steps=10000
         plot=${LITMUS_SCALE_PLOT:-$here/../docs/benchmarks-scale.png} ;;
  scale) series="1000 10000 100000 1000000"; tensors_shape="--steps 200 --tensors 10000"
         workers_shape="--steps 2000 --workers 64"; s3_steps=100000
         plot=${LITMUS_SCALE_PLOT:-$here/../docs/benchmarks-scale.png} ;;
  *) echo "unknown size $size (smoke, full or scale)" >&2; exit 2 ;;
esac

mkdir -p "$work"
s3_started=0
cleanup() {
  if [ "$s3_started" = 1 ]; then "$server" stop "$port" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

load() { uptime | sed 's/.*load average: //'; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
plain_read() { find "$1/events" -name '*.tfevents' -print0 | xargs -0 cat > /dev/null; }

# make_trial OUT ARGS...: prints how long writing took and how much disk the trial holds.
make() {
  local out=$1; shift
  local t0 t1
  t0=$(now)
  "$make_trial" "$out" "$@" > /dev/null
  t1=$(now)
  sync  # the fresh trial's writeback would otherwise run during the measurements
  echo "  make_trial $*: $(elapsed "$t0" "$t1") s, $(du -sh "$out" | cut -f1) on disk (load $(load))"
}

# run_allzero TRIAL LABEL [DATA_KEY]: `litmus run` AllZero on every step (default environment),
# then a plain read of the same event files; prints time, CPU, peak RSS and the ratio. With
# DATA_KEY, appends "DATA_KEY seconds rss_mb" to the plot's data.
run_allzero() {
  local trial=$1 label=$2 key=${3:-}
  local out="$work/out" t0 t1 t2 code
  rm -rf "$out"
  plain_read "$trial"  # warm the page cache (as far as it holds the trial)
  t0=$(now)
  set +e
  /usr/bin/time -o "$work/time" -f "%U %S %M" "$litmus" run --trial "$trial" --rule AllZero --keep-going \
    --logging-level error --output-dir "$out" --message-file "$out/message" --failure-file "$out/failure" > /dev/null
  code=$?
  set -e
  t1=$(now)
  [ "$code" -le 1 ] || { echo "litmus run on $trial failed with exit code $code" >&2; tail -3 "$work/time" >&2; exit 1; }
  /usr/bin/time -o "$work/time-plain" -f "%U %S" bash -c "$(declare -f plain_read); plain_read '$trial'"
  t2=$(now)
  read -r user sys rss < <(tail -1 "$work/time")
  read -r plain_user plain_sys < <(tail -1 "$work/time-plain")
  # On a shared machine wall time follows the load; CPU time (user + sys) much less.
  awk -v a="$t0" -v b="$t1" -v c="$t2" -v u="$user" -v s="$sys" -v m="$rss" -v pu="$plain_user" -v ps="$plain_sys" \
      -v n="$label" -v l="$(load)" 'BEGIN {
    cpu = (pu + ps >= 0.05) ? sprintf("%.2f", (u + s) / (pu + ps)) : "-"  # GNU time counts 10 ms ticks
    printf "  %s: litmus run AllZero %.2f s (CPU %.2f s), peak RSS %.0f MB; plain read %.2f s (CPU %.2f s); ratio run/plain %.2f wall, %s CPU (load %s)\n",
           n, b - a, u + s, m / 1024, c - b, pu + ps, (b - a) / (c - b), cpu, l }'
  if [ -n "$key" ]; then
    awk -v a="$t0" -v b="$t1" -v u="$user" -v s="$sys" -v m="$rss" -v k="$key" \
      'BEGIN { printf "%s %.3f %.1f %.3f\n", k, b - a, m / 1024, u + s }' >> "$work/plot.dat"
  fi
  rm -rf "$out"
}

echo "== scale: steps x 50 tensors x 16 float32 (idle poll of the live trial, then litmus run once it ended)"
: > "$work/plot.dat"
for steps in $series; do
  trial="$work/steps-$steps"
  make "$trial" --steps "$steps" --tensors 50 --elements 16 --no-end-marker
  "$build/bench/poll_bench" "$trial" --polls "$([ "$size" = smoke ] && echo 50 || echo 200)" | sed 's/^/  /'
  touch "$trial/training_job_end.ts"  # training ends
  run_allzero "$trial" "$steps steps x 50 tensors" "$steps"
  rm -rf "$trial"
done

echo "== scale: many tensors"
trial="$work/tensors"
make "$trial" $tensors_shape --elements 16
run_allzero "$trial" "$tensors_shape"
rm -rf "$trial"

echo "== scale: many workers"
trial="$work/workers"
make "$trial" $workers_shape --tensors 50 --elements 16
run_allzero "$trial" "$workers_shape x 50 tensors"
rm -rf "$trial"

if [ -n "$plot" ] && command -v gnuplot > /dev/null; then
  gnuplot <<EOF
set terminal pngcairo size 900,520 font ",11"
set output "$plot"
set title "litmus run (AllZero, every step) against trial size: steps x 50 tensors x 16 float32"
set logscale xy
set format x "%.0s%c"
set xlabel "steps"
set ylabel "time (s)"
set y2label "peak RSS (MB)"
set logscale y2
set ytics nomirror
set y2tics
set key top left
set grid
plot "$work/plot.dat" using 1:2 with linespoints lw 2 pt 7 title "wall time (s)", \
     "$work/plot.dat" using 1:4 with linespoints lw 2 pt 9 title "CPU time, user + sys (s)", \
     "$work/plot.dat" using 1:3 axes x1y2 with linespoints lw 2 pt 5 title "peak RSS (MB, right axis)"
EOF
  echo "  plot: $plot"
elif [ -n "$plot" ]; then
  echo "  (no plot: gnuplot is not installed; scripts/install-deps.sh installs gnuplot-nox)"
fi

[ -n "$s3_steps" ] || exit 0
echo "== scale: S3 (local S3 test server on port $port)"
memstore=$(( (s3_steps / 10000 + 1) << 30 ))
if ! S3_MEMSTORE_BYTES=$memstore "$server" start "$port" > "$work/server.log" 2>&1; then
  echo "  S3 shapes skipped: the S3 test server could not start (see scripts/s3-test-server.sh):"
  tail -3 "$work/server.log" | sed 's/^/    /'
  exit 0
fi
s3_started=1
export AWS_ACCESS_KEY_ID=TESTKEY AWS_SECRET_ACCESS_KEY=TESTSECRET AWS_REGION=us-east-1
export AWS_ENDPOINT_URL_S3=http://127.0.0.1:$port AWS_EC2_METADATA_DISABLED=true
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_ENDPOINT_URL
bucket=litmus-scale

# Idle polls of a 1000-step live trial (index and collections files suffice).
trial="$work/s3-poll"
make "$trial" --steps 1000 --tensors 50 --elements 16 --no-end-marker
"$build/bench/s3_bench" upload "$trial" "s3://$bucket/poll-1000" --without-events > /dev/null
"$build/bench/poll_bench" "s3://$bucket/poll-1000" --polls 50 | sed 's/^/  /'
rm -rf "$trial"

# The S3 shape: uploaded while training runs (idle polls), then the end marker, then litmus run
# against one curl fetching the same event files (--parallel-max 8, SigV4).
trial="$work/s3"
make "$trial" --steps "$s3_steps" --tensors 50 --elements 16 --no-end-marker
t0=$(now)
"$build/bench/s3_bench" upload "$trial" "s3://$bucket/steps-$s3_steps" --threads 8 > /dev/null
echo "  uploaded $(find "$trial" -type f | wc -l) objects in $(elapsed "$t0" "$(now)") s"
"$build/bench/poll_bench" "s3://$bucket/steps-$s3_steps" --polls 20 | sed 's/^/  /'
mkdir -p "$work/marker" && touch "$work/marker/training_job_end.ts"
"$build/bench/s3_bench" upload "$work/marker" "s3://$bucket/steps-$s3_steps" > /dev/null
(cd "$trial" && find events -name '*.tfevents' | sort) | while read -r key; do
  printf 'url = "%s/%s/steps-%s/%s"\noutput = "/dev/null"\n' "$AWS_ENDPOINT_URL_S3" "$bucket" "$s3_steps" "$key"
done > "$work/curl.cfg"
rm -rf "$trial"
out="$work/out"
t0=$(now)
set +e
/usr/bin/time -o "$work/time" -f "%U %S %M" "$litmus" run --trial "s3://$bucket/steps-$s3_steps" --rule AllZero \
  --keep-going --logging-level error --output-dir "$out" --message-file "$out/message" --failure-file "$out/failure" > /dev/null
code=$?
set -e
t1=$(now)
[ "$code" -le 1 ] || { echo "litmus run on S3 failed with exit code $code" >&2; exit 1; }
curl -sS --no-progress-meter --fail --parallel --parallel-max 8 --aws-sigv4 "aws:amz:us-east-1:s3" \
     --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' -K "$work/curl.cfg"
t2=$(now)
read -r user sys rss < <(tail -1 "$work/time")
awk -v a="$t0" -v b="$t1" -v c="$t2" -v u="$user" -v s="$sys" -v m="$rss" -v n="$s3_steps" -v l="$(load)" 'BEGIN {
  printf "  s3://, %d steps x 50 tensors: litmus run AllZero %.2f s (CPU %.2f s), peak RSS %.0f MB; curl of the event files %.2f s; ratio run/curl %.2f (load %s)\n",
         n, b - a, u + s, m / 1024, c - b, (b - a) / (c - b), l }'
