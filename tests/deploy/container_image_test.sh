#!/usr/bin/env bash
# The litmus image (deploy/container/Containerfile) built with podman and run as a SageMaker rule
# container: tests/deploy/CMakeLists.txt registers it as deploy.container_image (ctest label
# "container").
#
#   container_image_test.sh SOURCE_DIR BUILD_DIR [--from-source]
#
# Default: the image's "prebuilt" path: BUILD_DIR (already built by CI) is staged with
# deploy/container/stage-runtime.sh and copied into the image, so litmus is not compiled again.
# --from-source: the documented default path (the build stage compiles litmus in the container,
# ~10 minutes on 2 cores), and the example image of examples/custom_rule/Containerfile built FROM
# it; opt-in (LITMUS_TEST_CONTAINER_FROM_SOURCE=1 for ctest).
#
# No registry is reachable here: the base image is Debian 12 made with mmdebstrap from the Debian
# mirror (cached in $LITMUS_TEST_IMAGE_CACHE, default /var/tmp/litmus-image-test), imported as
# localhost/litmus-test-base:bookworm. Exit 77 (skipped) with the reason when podman or mmdebstrap
# is missing, or containers cannot run here.
#
# Checks: labels (version, plugin ABI), non-root user, exec-form entrypoint; the contract's
# environment (S3_PATH to a trial mounted read-only, LITMUS_RULE_PARAMETERS) with the output folders
# mounted at /opt/ml/processing/output/rule and /opt/ml/output: exit 1 + message + status.json +
# rule report when a rule fires, exit 0 and no message when none does, exit 2 + ClientError for a
# bad parameter, exit 143 + "Stopped" for SIGTERM and for the stop-signal file; an s3:// trial
# reaches curl (libcurl, loaded at run time, is in the image); the built-in rules
# listed; a plugin of the user's own added by an image FROM this one. Prints the image size,
# compressed (gzip of `podman save`), and fails above 60 MB.
set -uo pipefail
source_dir=$(cd "$1" && pwd)
build_dir=$(cd "$2" && pwd)
mode=${3:-prebuilt}
# Everything this test prints also goes to $DEPLOY_TEST_REPORT (set by CTest), which .ci/run shows.
if [ -n "${DEPLOY_TEST_REPORT:-}" ]; then
  exec > >(tee "$DEPLOY_TEST_REPORT") 2>&1
fi
skip() { echo "SKIP: $*"; exit 77; }
die() { echo "FAIL: $*" >&2; exit 1; }

if [ "$mode" = "--from-source" ] && [ "${LITMUS_TEST_CONTAINER_FROM_SOURCE:-0}" != 1 ]; then
  skip "opt-in: LITMUS_TEST_CONTAINER_FROM_SOURCE=1 builds the image the default way (litmus compiled in the container, ~10 minutes on 2 cores)"
fi
command -v podman > /dev/null || skip "podman is not installed (scripts/install-deps.sh installs it)"
work=$(mktemp -d /var/tmp/litmus-image-test.XXXXXX)
cleanup() {
  podman rm -f litmus-test-sigterm > /dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

# This sandbox (and CI's machine) runs VMs without CAP_SYS_RESOURCE, whose hard limits are lower
# than the rlimits podman asks for by default (setrlimit EPERM), and with cgroup v1 plus a cgroup2
# hierarchy that holds a controller (hybrid), which crun refuses ("cgroups in hybrid mode not
# supported"). runc with modest rlimits works: a containers.conf of this test only.
cat > "$work/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
[engine]
runtime = "$(command -v runc > /dev/null && echo runc || echo crun)"
CONF
export CONTAINERS_CONF="$work/containers.conf"

base=localhost/litmus-test-base:bookworm
if ! podman image exists "$base"; then
  cache=${LITMUS_TEST_IMAGE_CACHE:-/var/tmp/litmus-image-test}
  mkdir -p "$cache"
  if [ ! -f "$cache/bookworm-minbase.tar" ] || [ ! -s "$cache/bookworm-minbase.tar" ]; then
    command -v mmdebstrap > /dev/null || skip "mmdebstrap is not installed and $base does not exist"
    echo "making the Debian 12 base image with mmdebstrap (no registry is reachable)"
    # (--format=tar: mmdebstrap picks the format from the target's name otherwise, and a name not
    # ending in .tar makes a folder.)
    rm -rf "$cache/bookworm-minbase.tar" "$cache/bookworm-minbase.tmp.tar"
    mmdebstrap --quiet --format=tar --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
      --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
      --dpkgopt='path-exclude=/usr/share/info/*' --aptopt='Acquire::Languages "none"' bookworm \
      "$cache/bookworm-minbase.tmp.tar" "deb http://deb.debian.org/debian bookworm main" \
      "deb http://deb.debian.org/debian bookworm-updates main" \
      "deb http://deb.debian.org/debian-security bookworm-security main" \
      || skip "mmdebstrap could not make the base image (is the Debian mirror reachable?)"
    mv "$cache/bookworm-minbase.tmp.tar" "$cache/bookworm-minbase.tar"
  fi
  podman import --quiet "$cache/bookworm-minbase.tar" "$base" > /dev/null || die "podman import failed"
fi
if ! out=$(podman run --rm "$base" true 2>&1); then
  skip "containers cannot run here: $out"
fi

image=localhost/litmus:test
start=$(date +%s)
if [ "$mode" = "--from-source" ]; then
  podman build --quiet --network=host --build-arg BASE_IMAGE="$base" -f "$source_dir/deploy/container/Containerfile" \
    -t "$image" "$source_dir" > /dev/null || die "podman build (from source) failed"
else
  mkdir -p "$work/context"
  bash "$source_dir/deploy/container/stage-runtime.sh" "$build_dir" "$work/context/stage" || die "stage-runtime.sh failed"
  podman build --quiet --build-arg BASE_IMAGE="$base" --build-arg LITMUS_SOURCE=prebuilt \
    -f "$source_dir/deploy/container/Containerfile" -t "$image" "$work/context" > /dev/null || die "podman build failed"
fi
echo "image built in $(( $(date +%s) - start )) s ($mode)"

fails=0
check() {  # check WHAT EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected '$2', got '$3'"; fails=$((fails + 1)); fi
}
check_contains() {  # check_contains WHAT NEEDLE HAYSTACK
  case "$3" in *"$2"*) echo "ok   $1" ;; *) echo "FAIL $1: '$2' not in '$3'"; fails=$((fails + 1)) ;; esac
}

# ---- image metadata
version=$(sed -n 's/^project(litmus VERSION \([0-9.]*\).*/\1/p' "$source_dir/CMakeLists.txt")
abi="$(sed -n 's/^#define LITMUS_ABI_MAJOR \([0-9]*\).*/\1/p' "$source_dir/plugin-sdk/include/litmus/rule_abi.h").$(sed -n 's/^#define LITMUS_ABI_MINOR \([0-9]*\).*/\1/p' "$source_dir/plugin-sdk/include/litmus/rule_abi.h")"
check "label version" "$version" "$(podman image inspect -f '{{index .Labels "org.opencontainers.image.version"}}' "$image")"
check "label plugin ABI" "$abi" "$(podman image inspect -f '{{index .Labels "io.litmus.plugin-abi"}}' "$image")"
check "image-info" "version=$version plugin_abi=$abi" "$(podman run --rm --entrypoint /bin/cat "$image" /usr/local/share/litmus/image-info | tr '\n' ' ' | sed 's/ $//')"
check "exec-form entrypoint" "[/usr/local/bin/litmus]" "$(podman image inspect -f '{{.Config.Entrypoint}}' "$image")"
check "user" "10001:10001" "$(podman image inspect -f '{{.Config.User}}' "$image")"
check "id" "uid=10001(litmus) gid=10001(litmus) groups=10001(litmus)" "$(podman run --rm --entrypoint /usr/bin/id "$image")"
rules=$(podman run --rm "$image" rules 2>&1)
check_contains "built-in rules listed" "VanishingGradient" "$rules"
check "20 built-in rules" "20" "$(podman run --rm "$image" rules --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["rules"]))')"

# ---- the SageMaker rule-container contract (docs/job-contract.md §3, §4, §6)
trial=$source_dir/tests/fixtures/smdebug/pt_exploding
contract_run() {  # contract_run NAME PARAMETERS_JSON [podman options...]: exit code; files in $work/NAME
  local name=$1 params=$2
  shift 2
  mkdir -p "$work/$name/rule" "$work/$name/output"
  chmod 0777 "$work/$name/rule" "$work/$name/output"  # the image's user writes there
  podman run --rm -v "$trial:/opt/ml/input/trial:ro" -v "$work/$name/rule:/opt/ml/processing/output/rule" \
    -v "$work/$name/output:/opt/ml/output" -e S3_PATH=/opt/ml/input/trial -e LITMUS_RULE_PARAMETERS="$params" \
    -e SMDEBUG_TRAINING_END_DELAY_REFRESH=0 "$@" "$image" > "$work/$name/stdout" 2> "$work/$name/stderr"
}
json_field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2" 2>/dev/null; }

contract_run fires '{"rule_to_invoke": "ExplodingTensor"}'
check "firing rule: exit code" 1 $?
check_contains "firing rule: /opt/ml/output/message" "RuleEvaluationConditionMet: Evaluation of the rule ExplodingTensor at step" "$(cat "$work/fires/output/message" 2>&1)"
check "firing rule: status.json" IssuesFound "$(json_field "$work/fires/rule/status.json" RuleEvaluationStatus)"
check "firing rule: rule report" 1 "$(json_field "$work/fires/rule/rule-reports/ExplodingTensor.json" RuleTriggered)"
check "firing rule: events.jsonl" yes "$([ -s "$work/fires/rule/events.jsonl" ] && echo yes)"
check "firing rule: temp files in .sagemaker-ignore" yes "$([ -d "$work/fires/rule/.sagemaker-ignore" ] && echo yes)"
check_contains "firing rule: verdict on stdout" "IssuesFound" "$(cat "$work/fires/stdout")"

# Rules run in the image's litmus-rule-worker (not in litmus's hidden worker mode, its fallback).
check_contains "rule workers run litmus-rule-worker" "rule workers run /usr/local/libexec/litmus/litmus-rule-worker" \
  "$(podman run --rm -v "$trial:/opt/ml/input/trial:ro" -e SMDEBUG_TRAINING_END_DELAY_REFRESH=0 "$image" run \
       --trial /opt/ml/input/trial --rule ExplodingTensor --output-dir /tmp/out --logging-level debug 2>&1)"

contract_run quiet '{"rule_to_invoke": "VanishingGradient", "threshold": "1e-30"}'
check "quiet rule: exit code" 0 $?
check "quiet rule: no message file" no "$([ -e "$work/quiet/output/message" ] && echo yes || echo no)"
check "quiet rule: status.json" NoIssuesFound "$(json_field "$work/quiet/rule/status.json" RuleEvaluationStatus)"

contract_run bad '{"rule_to_invoke": "VanishingGradient", "threshold": "abc"}'
check "bad parameter: exit code" 2 $?
check_contains "bad parameter: message" "ClientError: " "$(cat "$work/bad/output/message" 2>&1)"
check_contains "bad parameter: failure file" "ClientError: " "$(cat "$work/bad/output/failure" 2>&1)"

# S3 through the image's libcurl (litmus loads it when a job first uses S3; stage-runtime.sh copies
# it with its dependencies): an endpoint where nothing listens gives curl's own error.
s3_err=$(podman run --rm -e AWS_ACCESS_KEY_ID=test -e AWS_SECRET_ACCESS_KEY=test -e AWS_REGION=us-east-1 \
  -e AWS_ENDPOINT_URL=http://127.0.0.1:9 "$image" run --trial s3://bucket/trial --rule VanishingGradient \
  --output-dir /tmp/out 2>&1)
check_contains "S3 trial: the request is sent" "ClientError: trial s3://bucket/trial: GET http://127.0.0.1:9/" "$s3_err"
check_contains "S3 trial: by the image's libcurl" "Couldn't connect to server" "$s3_err"

# A trial still being written (no end marker): SIGTERM, then the stop-signal file.
growing=$work/growing
cp -r "$trial" "$growing" && rm -f "$growing/training_job_end.ts"
echo "$(( $(date +%s) - 120 ))" > "$growing/stop-now"
chmod -R a+rX "$growing"
trial=$growing
mkdir -p "$work/sigterm/rule" "$work/sigterm/output" && chmod 0777 "$work/sigterm/rule" "$work/sigterm/output"
podman run -d --name litmus-test-sigterm -v "$trial:/opt/ml/input/trial:ro" \
  -v "$work/sigterm/rule:/opt/ml/processing/output/rule" -v "$work/sigterm/output:/opt/ml/output" \
  -e S3_PATH=/opt/ml/input/trial -e LITMUS_RULE_PARAMETERS='{"rule_to_invoke": "VanishingGradient"}' \
  "$image" > /dev/null
for _ in $(seq 1 300); do [ -s "$work/sigterm/rule/status.json" ] && break; sleep 0.1; done
sleep 1
podman kill --signal TERM litmus-test-sigterm > /dev/null
check "SIGTERM: exit code" 143 "$(podman wait litmus-test-sigterm)"
check_contains "SIGTERM: message" "Stopped: SIGTERM received" "$(cat "$work/sigterm/output/message" 2>&1)"
check "SIGTERM: status.json" Stopped "$(json_field "$work/sigterm/rule/status.json" RuleEvaluationStatus)"
podman rm litmus-test-sigterm > /dev/null

contract_run stopfile '{"rule_to_invoke": "VanishingGradient"}' -e SAGEMAKER_ENV_RULE_STOP_SIGNAL_FILE=stop-now \
  -e rule_stop_grace_time_secs=0
check "stop-signal file: exit code" 143 $?
check_contains "stop-signal file: message" "Stopped: stop requested by the stop-signal file" "$(cat "$work/stopfile/output/message" 2>&1)"

# ---- a plugin of the user's own, added by an image FROM this one
plugin=$(find "$build_dir/examples/custom_rule" -name 'custom_gradient_rule*.so' 2>/dev/null | head -n 1)
if [ "$mode" = "--from-source" ]; then
  podman build --quiet --network=host --build-arg LITMUS_IMAGE="$image" --build-arg BUILD_IMAGE="$base" \
    -f "$source_dir/examples/custom_rule/Containerfile" -t localhost/litmus-custom:test "$source_dir/examples/custom_rule" \
    > /dev/null || die "examples/custom_rule/Containerfile failed"
elif [ -n "$plugin" ]; then
  # The example's last stage, with the plugin CI built already (the example's build stage compiles
  # it in a container: --from-source).
  mkdir -p "$work/custom" && cp "$plugin" "$work/custom/"
  printf 'FROM %s\nCOPY %s /usr/local/lib/litmus/plugins/\n' "$image" "$(basename "$plugin")" > "$work/custom/Containerfile"
  podman build --quiet -t localhost/litmus-custom:test "$work/custom" > /dev/null || die "custom rule image failed"
else
  echo "skip custom rule image: $build_dir has no examples/custom_rule plugin (LITMUS_BUILD_EXAMPLES=OFF)"
fi
if podman image exists localhost/litmus-custom:test; then
  check_contains "custom rule image lists CustomGradientRule" "CustomGradientRule" "$(podman run --rm localhost/litmus-custom:test rules 2>&1)"
  trial=$source_dir/tests/fixtures/smdebug/pt_exploding
  image=localhost/litmus-custom:test contract_run custom '{"rule_to_invoke": "CustomGradientRule"}'
  code=$?
  check "custom rule runs (exit 0 or 1)" yes "$([ $code -le 1 ] && echo yes || echo "no: $code $(cat "$work/custom/stderr")")"
  podman rmi localhost/litmus-custom:test > /dev/null
fi

# ---- size
podman save "$image" 2> /dev/null | gzip -6 > "$work/image.tar.gz"
compressed=$(stat -c %s "$work/image.tar.gz")
base_compressed=$(podman save "$base" 2> /dev/null | gzip -6 | wc -c)
echo "image size: $(podman image inspect -f '{{.Size}}' "$image" | awk '{ printf "%.1f MB", $1 / 1e6 }') uncompressed," \
  "$(awk -v b="$compressed" 'BEGIN { printf "%.1f MB", b / 1e6 }') compressed (base image" \
  "$(awk -v b="$base_compressed" 'BEGIN { printf "%.1f MB", b / 1e6 }'))"
check "compressed size <= 60 MB" yes "$([ "$compressed" -le 60000000 ] && echo yes || echo no)"
podman rmi "$image" > /dev/null

echo "$fails failed"
[ "$fails" -eq 0 ]
