#!/usr/bin/env bash
# Installs what building, running and testing Pushworker needs on Debian 12 (run as root).
# Idempotent: packages already present are skipped by apt-get.
set -euo pipefail
packages=(
  pkg-config librabbitmq-dev libhiredis-dev libnghttp2-dev libssl-dev   # the C libraries we link
  rabbitmq-server redis-server                                           # the broker and the group store
  nghttp2-client nghttp2-server curl openssl                             # independent HTTP/2 peers for tests and bench
  amqp-tools                                                             # amqp-publish / amqp-consume for the shell examples
  python3 python3-pika python3-h2 python3-cryptography                   # examples, the independent h2 stub, ops/bench (JWT for h2load)
  procps
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "ops/install-deps: installing ${missing[*]}"
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  # The Debian packages try to start system services; policy-rc.d may refuse, which is fine:
  # ops/services.sh starts our own loopback-only instances.
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "ops/install-deps: Swift 6 toolchain not found on PATH (see README)" >&2; exit 1; }
