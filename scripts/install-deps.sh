#!/usr/bin/env bash
# Installs every Debian 12 package that litmus needs to build, test and benchmark.
# Idempotent and non-interactive; run as root (or with sudo available) on a fresh machine.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config git
  clang libclang-rt-14-dev
  # libraries (see docs/dependencies in shared design: package -> find_package -> target)
  libprotobuf-dev protobuf-compiler
  nlohmann-json3-dev libcli11-dev
  libspdlog-dev libfmt-dev
  libtbb-dev
  libpcre2-dev
  libyaml-cpp-dev
  libcurl4-openssl-dev libssl-dev
  libpugixml-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  python3
  # python/: the litmus Python package, the smdebug compatibility layer, the Python rule host
  python3-dev python3-numpy pybind11-dev
  # S3 test server (scripts/s3-test-server.sh: Ceph RADOS Gateway for tests/s3 and bench/)
  radosgw ceph-mon ceph-osd ceph-common uuid-runtime curl
  python3-botocore  # tests/actions/fake_aws_endpoint.py checks SigV4 signatures with it
  # the HTML report (engine/report): dygraphs, inlined at build time; chromium opens the report in
  # tests/e2e/run_report_test.cc and draws docs/report.png
  libjs-dygraphs chromium
  # docs: the SDK API reference (docs/sdk, target litmus_sdk_docs, test sdk.docs)
  doxygen
  # docs/benchmarks-scale.png, drawn by bench/scale-bench.sh (bench/run-bench.sh full)
  gnuplot-nox
  # deployment tests (tests/deploy): the manifests' parser; the image built and run with podman
  # (runc: crun refuses hosts with hybrid cgroups) on a Debian base made with mmdebstrap.
  # `kubectl kustomize` needs kubectl >= 1.27, which Debian 12 does not have (kubernetes-client is
  # 1.20): deploy.kustomize runs where kubectl is installed and is skipped elsewhere.
  python3-yaml podman runc mmdebstrap
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -y -q
$SUDO apt-get install -y -q --no-install-recommends "${packages[@]}"
