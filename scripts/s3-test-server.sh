#!/usr/bin/env bash
# s3-test-server.sh — a real S3 server for integration tests, on 127.0.0.1 only.
#
# It is Ceph RADOS Gateway (Debian bookworm package `radosgw`, Ceph 16.2 "pacific") on a
# throw-away single-node Ceph cluster (1 monitor + 1 OSD with the in-memory `memstore`
# object store, cluster auth off). Unlike s3rver/fauxqs it VERIFIES AWS Signature V4
# (wrong secret -> 403 SignatureDoesNotMatch, wrong payload hash -> 400
# XAmzContentSHA256Mismatch) and implements ListObjectsV2 (prefix, delimiter, start-after,
# max-keys + continuation-token) and ranged GET (206 + Content-Range).
#
# Usage:
#   s3-test-server.sh [start] PORT     install if missing, start, wait until ready;
#                                      prints the radosgw PID as the last stdout line
#   s3-test-server.sh stop PORT        stop every daemon of that instance, remove its state
#   s3-test-server.sh status PORT      exit 0 if the endpoint answers a signed request
#
# Environment (all optional):
#   S3_ACCESS_KEY / S3_SECRET_KEY   credentials of the S3 user   (default TESTKEY / TESTSECRET)
#   S3_REGION                       region for the signing scope (default us-east-1; rgw accepts any)
#   S3_TEST_BUCKETS                 space-separated buckets to create after start
#   S3_MON_PORT                     Ceph monitor port            (default PORT+1)
#   S3_STATE_DIR                    state/log dir                (default /tmp/s3-test-server-PORT)
#   S3_MEMSTORE_BYTES               OSD RAM budget               (default 1073741824)
#   S3_START_TIMEOUT                seconds to wait for readiness (default 120)
#
# Clients must send x-amz-content-sha256 (real SHA-256 of the body, or UNSIGNED-PAYLOAD),
# as real S3 requires. Path-style URLs: http://127.0.0.1:PORT/BUCKET/KEY.
set -euo pipefail

log() { echo "s3-test-server: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

cmd=start
case "${1:-}" in
  start|stop|status) cmd=$1; shift ;;
esac
PORT=${1:-}
[[ "$PORT" =~ ^[0-9]+$ ]] || die "usage: $0 [start|stop|status] PORT"
MON_PORT=${S3_MON_PORT:-$((PORT + 1))}
D=${S3_STATE_DIR:-/tmp/s3-test-server-$PORT}
AK=${S3_ACCESS_KEY:-TESTKEY}
SK=${S3_SECRET_KEY:-TESTSECRET}
REGION=${S3_REGION:-us-east-1}
ENDPOINT="http://127.0.0.1:$PORT"

signed_curl() {  # signed_curl ARGS... — SigV4 request with curl's built-in signer
  curl -sS --max-time 10 --aws-sigv4 "aws:amz:$REGION:s3" --user "$AK:$SK" \
       -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"
}

ready() { [[ "$(signed_curl -o /dev/null -w '%{http_code}' "$ENDPOINT/" 2>/dev/null)" == 200 ]]; }

stop_instance() {
  local pids=() f p
  for f in rgw osd mon; do
    [[ -f "$D/run/$f.pid" ]] && pids+=("$(cat "$D/run/$f.pid")")
  done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for _ in $(seq 1 30); do                        # up to 3 s for a clean exit (state is thrown away)
    local alive=0
    for p in "${pids[@]}"; do
      if kill -0 "$p" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; then alive=1; fi
    done
    (( alive )) || break
    sleep 0.1
  done
  for p in "${pids[@]}"; do
    if kill -0 "$p" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; then
      kill -9 "$p" 2>/dev/null || true
    fi
  done
  rm -rf "$D"
}

ensure_installed() {
  local missing=0 b
  for b in radosgw radosgw-admin ceph-mon ceph-osd ceph monmaptool ceph-authtool uuidgen curl; do
    command -v "$b" >/dev/null 2>&1 || missing=1
  done
  (( missing )) || return 0
  log "installing radosgw + ceph-mon + ceph-osd (Debian packages, ~70 MB download)"
  local SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  local pkgs=(radosgw ceph-mon ceph-osd ceph-common uuid-runtime curl)
  export DEBIAN_FRONTEND=noninteractive
  if ! $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${pkgs[@]}" >&2; then
    $SUDO apt-get -o DPkg::Lock::Timeout=600 update >&2
    $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${pkgs[@]}" >&2
  fi
}

start_instance() {
  if [[ -f "$D/run/rgw.pid" ]] && kill -0 "$(cat "$D/run/rgw.pid")" 2>/dev/null && ready; then
    log "already running at $ENDPOINT"; cat "$D/run/rgw.pid"; return 0
  fi
  [[ -d "$D" ]] && stop_instance
  ensure_installed
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then die "port $PORT is in use"; fi
  if (exec 3<>"/dev/tcp/127.0.0.1/$MON_PORT") 2>/dev/null; then die "monitor port $MON_PORT is in use (set S3_MON_PORT)"; fi

  local t0; t0=$(date +%s)
  mkdir -p "$D"/{mon,osd0,run,log,rgw}
  local fsid; fsid=$(uuidgen)
  # tcp_nodelay=1: without it beast writes headers and body separately and Nagle waits for the
  # client's delayed ACK, so every answer on a kept-alive connection takes 40 ms (litmus reuses them).
  cat > "$D/ceph.conf" <<EOF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$MON_PORT
mon initial members = a
public network = 127.0.0.0/8
auth cluster required = none
auth service required = none
auth client required = none
ms bind msgr1 = false
ms bind ipv6 = false
ms mon client mode = crc
run dir = $D/run
admin socket = $D/run/\$name.asok
log file = $D/log/\$name.log
keyring = $D/keyring
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = ${S3_MEMSTORE_BYTES:-1073741824}
[mon.a]
mon data = $D/mon
[osd.0]
osd data = $D/osd0
[client.rgw.a]
rgw data = $D/rgw
rgw frontends = beast endpoint=127.0.0.1:$PORT tcp_nodelay=1
rgw dns name = localhost
EOF
  local C=(-c "$D/ceph.conf")
  ceph-authtool --create-keyring "$D/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  monmaptool --create --addv a "[v2:127.0.0.1:$MON_PORT]" --fsid "$fsid" "$D/monmap" >/dev/null 2>&1
  ceph-mon "${C[@]}" --mkfs -i a --monmap "$D/monmap" --keyring "$D/keyring" >>"$D/log/setup.log" 2>&1

  # every daemon runs in the foreground (-f) in its own session; we keep its PID
  setsid ceph-mon "${C[@]}" -f -i a </dev/null >>"$D/log/mon.out" 2>&1 &
  echo $! > "$D/run/mon.pid"
  local osd_uuid; osd_uuid=$(uuidgen)
  timeout 60 ceph "${C[@]}" osd new "$osd_uuid" >>"$D/log/setup.log" 2>&1 || die "monitor did not come up (see $D/log)"
  ceph-osd "${C[@]}" -i 0 --mkfs --osd-uuid "$osd_uuid" >>"$D/log/setup.log" 2>&1
  setsid ceph-osd "${C[@]}" -f -i 0 </dev/null >>"$D/log/osd.out" 2>&1 &
  echo $! > "$D/run/osd.pid"
  local deadline=$(( t0 + ${S3_START_TIMEOUT:-120} ))
  until timeout 10 ceph "${C[@]}" osd stat 2>/dev/null | grep -q '1 up'; do
    (( $(date +%s) < deadline )) || { stop_instance; die "OSD did not come up"; }
    sleep 0.5
  done
  setsid radosgw "${C[@]}" -n client.rgw.a -f </dev/null >>"$D/log/rgw.out" 2>&1 &
  echo $! > "$D/run/rgw.pid"
  until curl -s -o /dev/null --max-time 2 "$ENDPOINT/"; do
    kill -0 "$(cat "$D/run/rgw.pid")" 2>/dev/null || { tail -20 "$D/log/rgw.out" >&2; stop_instance; die "radosgw exited"; }
    (( $(date +%s) < deadline )) || { stop_instance; die "radosgw did not answer on $ENDPOINT"; }
    sleep 0.2
  done
  radosgw-admin "${C[@]}" user create --uid=tester --display-name=tester \
      --access-key="$AK" --secret-key="$SK" >>"$D/log/setup.log" 2>&1
  until ready; do
    (( $(date +%s) < deadline )) || { stop_instance; die "signed requests are not accepted"; }
    sleep 0.2
  done
  local b
  for b in ${S3_TEST_BUCKETS:-}; do
    [[ "$(signed_curl -o /dev/null -w '%{http_code}' -X PUT "$ENDPOINT/$b")" == 200 ]] || die "could not create bucket $b"
  done
  log "ready at $ENDPOINT in $(( $(date +%s) - t0 )) s (access key $AK, region $REGION, state $D)"
  cat "$D/run/rgw.pid"
}

case "$cmd" in
  start)  start_instance ;;
  stop)   stop_instance; log "stopped instance on port $PORT" ;;
  status) if ready; then log "up at $ENDPOINT"; else log "not answering at $ENDPOINT"; exit 1; fi ;;
esac
