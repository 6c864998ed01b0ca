#!/usr/bin/env bash
# deploy/container/litmus-sidecar, the native-sidecar wrapper of deploy/kubernetes/sidecar, with the
# real litmus on a trial that grows (ctest deploy.sidecar_wrapper):
#   - after litmus's verdict the wrapper keeps running (Kubernetes would restart a sidecar that
#     exits and evaluate again), with litmus's exit code in LITMUS_SIDECAR_EXIT_FILE;
#   - SIGTERM then ends it with litmus's code;
#   - SIGTERM while litmus still waits for training reaches litmus (exit 143, status Stopped);
#   - --wait-for-verdict returns at once without the end marker, and waits for the exit file
#     once training_job_end.ts exists.
#   sidecar_wrapper_test.sh SOURCE_DIR LITMUS_BINARY
set -uo pipefail
source_dir=$(cd "$1" && pwd)
litmus=$2
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
fails=0
check() {
  if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected '$2', got '$3'"; fails=$((fails + 1)); fi
}
wait_for() {  # wait_for FILE: up to 60 s
  for _ in $(seq 1 600); do [ -e "$1" ] && return 0; sleep 0.1; done
  return 1
}
wait_exit() {  # wait_exit PID: its exit code in $code; after 60 s it is killed and $code is "timeout"
  for _ in $(seq 1 600); do kill -0 "$1" 2> /dev/null || break; sleep 0.1; done
  if kill -0 "$1" 2> /dev/null; then
    kill -9 "$1"
    wait "$1" 2> /dev/null
    code=timeout
    return
  fi
  wait "$1"
  code=$?
}

# The wrapper calls /usr/local/bin/litmus, as in the image: point it at the binary under test.
sed "s|/usr/local/bin/litmus run|$litmus run|" "$source_dir/deploy/container/litmus-sidecar" > "$work/litmus-sidecar"
chmod +x "$work/litmus-sidecar"
export SMDEBUG_TRAINING_END_DELAY_REFRESH=0 LITMUS_OUTPUT_LAYOUT=local S3_PATH= LITMUS_RULE_PARAMETERS=

# 1. A rule that fires: the wrapper outlives litmus, then SIGTERM ends it with code 1.
trial=$work/trial1
cp -r "$source_dir/tests/fixtures/smdebug/pt_exploding" "$trial"
LITMUS_SIDECAR_EXIT_FILE=$work/exit1 "$work/litmus-sidecar" --trial "$trial" --rule ExplodingTensor \
  --output-dir "$work/out1" --poll-interval-ms 20 > "$work/log1" 2>&1 &
pid=$!
pids+=("$pid")
wait_for "$work/exit1" || echo "no exit file"
check "exit file after the verdict" 1 "$(cat "$work/exit1" 2> /dev/null)"
sleep 1
check "wrapper still running after the verdict" yes "$(kill -0 "$pid" 2> /dev/null && echo yes || echo no)"
check "message file (the stop file training watches)" RuleEvaluationConditionMet \
  "$(cut -d: -f1 "$work/out1/message" 2> /dev/null)"
kill -TERM "$pid"
wait_exit "$pid"
check "SIGTERM after the verdict: litmus's exit code" 1 "$code"

# 2. Training still running (no end marker): SIGTERM reaches litmus.
trial=$work/trial2
cp -r "$source_dir/tests/fixtures/smdebug/pt_exploding" "$trial"
rm "$trial/training_job_end.ts"
check "--wait-for-verdict without the end marker returns at once" 0 \
  "$(LITMUS_SIDECAR_EXIT_FILE=$work/exit2 timeout 5 "$work/litmus-sidecar" --wait-for-verdict "$trial"; echo $?)"
LITMUS_SIDECAR_EXIT_FILE=$work/exit2 "$work/litmus-sidecar" --trial "$trial" --rule VanishingGradient \
  --output-dir "$work/out2" --poll-interval-ms 20 > "$work/log2" 2>&1 &
pid=$!
pids+=("$pid")
wait_for "$work/out2/status.json"
sleep 1
kill -TERM "$pid"
wait_exit "$pid"
check "SIGTERM while litmus runs: exit code" 143 "$code"
check "SIGTERM while litmus runs: status" Stopped \
  "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["RuleEvaluationStatus"])' "$work/out2/status.json")"

# 3. Training ends: --wait-for-verdict (the preStop hook) waits until litmus has finished.
trial=$work/trial3
cp -r "$source_dir/tests/fixtures/smdebug/pt_exploding" "$trial"
rm "$trial/training_job_end.ts"
LITMUS_SIDECAR_EXIT_FILE=$work/exit3 "$work/litmus-sidecar" --trial "$trial" --rule VanishingGradient \
  --output-dir "$work/out3" --poll-interval-ms 20 > "$work/log3" 2>&1 &
pid=$!
pids+=("$pid")
wait_for "$work/out3/status.json"
touch "$trial/training_job_end.ts"
LITMUS_SIDECAR_EXIT_FILE=$work/exit3 timeout 60 "$work/litmus-sidecar" --wait-for-verdict "$trial"
check "--wait-for-verdict after the end marker: waited for the verdict" 0 "$(cat "$work/exit3" 2> /dev/null)"
kill -TERM "$pid"
wait_exit "$pid"
check "after the final evaluation: exit code" 0 "$code"

echo "$fails failed"
[ "$fails" -eq 0 ]
