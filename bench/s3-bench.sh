#!/usr/bin/env bash
# S3 benchmark (docs/benchmarks.md, docs/s3.md): `litmus run` CustomGradientRule on the benchmark
# trial served by the local S3 test server (scripts/s3-test-server.sh), as ratios to two parallel
# curl baselines measured in the same run (one curl, --parallel, SigV4): fetching the same event
# files whole, and sending one ranged GET per tensor record (what a reader without litmus's
# coalescing of adjacent records sends); and the
# requests per poll while following an idle trial. Skips cleanly if the server cannot start.
# Usage: bench/s3-bench.sh BUILD_DIR [smoke|full] [WORK_DIR]
#   smoke: 10 steps x 10 x 1 MiB;  full: 100 steps x 50 x 1 MiB (needs ~6 GB RAM for the server).
# Environment: LITMUS_S3_BENCH_PORT (default 17590), LITMUS_S3_BENCH_CURL_PARALLEL (default 8).
set -euo pipefail
build=${1:?usage: bench/s3-bench.sh BUILD_DIR [smoke|full] [WORK_DIR]}
size=${2:-smoke}
work=${3:-$(mktemp -d "${TMPDIR:-/tmp}/litmus-s3-bench.XXXXXX")}
here=$(cd "$(dirname "$0")" && pwd)
server="$here/../scripts/s3-test-server.sh"
port=${LITMUS_S3_BENCH_PORT:-17590}
parallel=${LITMUS_S3_BENCH_CURL_PARALLEL:-8}
litmus="$build/engine/cli/litmus"
plugin="$build/examples/custom_rule/custom_gradient_rule.so"
endpoint="http://127.0.0.1:$port"
bucket=litmus-bench

case "$size" in
  smoke) shape="--steps 10 --tensors 10 --elements 262144 --hot 3 --nan 5"; memstore=$((1 << 30)); repeat=1 ;;
  full)  shape="--steps 100 --tensors 50 --elements 262144 --hot 10,50,90 --nan 25,75 --inf 60"
         memstore=$((7 << 30)); repeat=3 ;;
  *) echo "unknown size $size (smoke or full)" >&2; exit 2 ;;
esac

mkdir -p "$work"
cleanup() {
  "$server" stop "$port" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== s3: starting the S3 test server on $endpoint"
if ! S3_MEMSTORE_BYTES=$memstore "$server" start "$port" > "$work/server.log" 2>&1; then
  echo "S3 benchmark skipped: the S3 test server could not start (see scripts/s3-test-server.sh):"
  tail -3 "$work/server.log" | sed 's/^/  /'
  exit 0
fi

export AWS_ACCESS_KEY_ID=TESTKEY AWS_SECRET_ACCESS_KEY=TESTSECRET AWS_REGION=us-east-1
export AWS_ENDPOINT_URL_S3=$endpoint AWS_EC2_METADATA_DISABLED=true
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_ENDPOINT_URL

now() { date +%s.%N; }
trial="$work/trial"
echo "== s3: make_trial $shape"
"$build/bench/make_trial" "$trial" $shape > /dev/null
"$build/bench/s3_bench" upload "$trial" "s3://$bucket/big"
# The idle trial: the same index and collections files, no events, no end marker.
"$build/bench/s3_bench" upload "$trial" "s3://$bucket/idle" --without-events --without-end-marker
# curl's config: one signed GET per event file, bodies discarded.
(cd "$trial" && find events -name '*.tfevents' | sort) | while read -r key; do
  printf 'url = "%s/%s/big/%s"\noutput = "/dev/null"\n' "$endpoint" "$bucket" "$key"
done > "$work/curl.cfg"
objects=$(grep -c '^url' "$work/curl.cfg")
bytes=$(du -sb "$trial/events" | cut -f1)
rm -rf "$trial"
# One ranged GET per tensor record (`next` starts a new transfer, so each carries its own signing
# options).
"$build/bench/s3_bench" ranges "s3://$bucket/big" | while read -r key first last; do
  printf 'url = "%s/%s/%s"\nrange = "%s-%s"\noutput = "/dev/null"\naws-sigv4 = "aws:amz:us-east-1:s3"\n' \
         "$endpoint" "$bucket" "$key" "$first" "$last"
  printf 'user = "%s:%s"\nheader = "x-amz-content-sha256: UNSIGNED-PAYLOAD"\nfail\nnext\n' \
         "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY"
done | head -n -1 > "$work/curl-ranges.cfg"
records=$(grep -c '^url' "$work/curl-ranges.cfg")

curl_fetch() {
  curl -sS --no-progress-meter --fail --parallel --parallel-max "$parallel" --aws-sigv4 "aws:amz:us-east-1:s3" \
       --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
       -K "$work/curl.cfg"
}
curl_ranges() { curl -sS --no-progress-meter --parallel --parallel-max "$parallel" -K "$work/curl-ranges.cfg"; }
litmus_run() {
  "$litmus" run --trial "s3://$bucket/big" --plugin "$plugin" \
    --rule CustomGradientRule --param threshold=0.5 --keep-going --logging-level error \
    --output-dir "$work/out" --message-file "$work/out/message" --failure-file "$work/out/failure" > /dev/null
}

min() { awk -v a="$1" -v b="$2" -v m="$3" 'BEGIN { d = b - a; print (d < m) ? d : m }'; }
curl_fetch  # warm the server
best_curl=1e9 best_ranges=1e9 best_run=1e9
for _ in $(seq 1 "$repeat"); do
  t0=$(now); curl_fetch; t1=$(now); curl_ranges; t2=$(now)
  set +e; litmus_run; code=$?; set -e
  t3=$(now)
  [ "$code" -le 1 ] || { echo "litmus run on S3 failed with exit code $code" >&2; exit 1; }
  best_curl=$(min "$t0" "$t1" "$best_curl")
  best_ranges=$(min "$t1" "$t2" "$best_ranges")
  best_run=$(min "$t2" "$t3" "$best_run")
done
awk -v c="$best_curl" -v g="$best_ranges" -v r="$best_run" -v n="$objects" -v k="$records" -v b="$bytes" \
    -v p="$parallel" 'BEGIN {
  printf "litmus run (CustomGradientRule) on s3:// (%d event files, %.0f MiB): %.3f s\n", n, b / 1048576, r
  printf "  curl --parallel-max %d, the same files whole: %.3f s; ratio run/curl %.2f\n", p, c, r / c
  printf "  curl --parallel-max %d, %d ranged GETs (one per record): %.3f s; ratio run/curl %.2f\n", p, k, g, r / g }'
"$build/bench/s3_bench" idle-polls "s3://$bucket/idle" --polls 20
