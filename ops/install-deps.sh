#!/usr/bin/env bash
# Installs what building, running and testing Pushworker needs on Debian 12 (run as root).
# Idempotent: packages already present are skipped by apt-get.
set -euo pipefail
packages=(
  pkg-config librabbitmq-dev libhiredis-dev libnghttp2-dev libssl-dev   # the C libraries we link
  libjemalloc-dev                                                        # the allocator of release builds (README "Memory allocator")
  zlib1g-dev                                                             # AsyncHTTPClient's HTTP compression module links zlib (Web Push over HTTP/1.1)
  rabbitmq-server redis-server                                           # the broker and the group store
  nghttp2-client nghttp2-server curl openssl                             # independent HTTP/2 peers for tests and bench
  amqp-tools jq                                                          # amqp-publish / amqp-consume and the event filter of the shell examples
  ruby-bunny php-cli php-amqplib                                         # the Ruby and PHP publisher examples (ops/examples-check runs them)
  golang-go golang-github-rabbitmq-amqp091-go-dev                        # the Go publisher example, built offline from Debian's sources
  python3 python3-pika python3-h2 python3-cryptography python3-redis     # examples, the independent h2 stub, ops/bench (JWT for h2load), ops/lib (Redis)
  python3-venv                                                           # ops/python-peers.sh: the pinned http-ece / PyJWT peers of the Web Push tests
  procps
  iproute2 nftables                                                      # ops/cluster: a network namespace per RabbitMQ node, partitions
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "ops/install-deps: installing ${missing[*]}"
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  # The Debian packages would start system-wide RabbitMQ and Redis services listening on every
  # interface, which the scripts would then reuse. A temporary policy-rc.d (exit 101: "action
  # forbidden") keeps invoke-rc.d from starting anything during the install; ops/services.sh starts
  # our own loopback-only instances. An existing policy-rc.d is put back afterwards.
  policy=/usr/sbin/policy-rc.d
  saved=""
  if [ -e "$policy" ]; then saved=$(mktemp); $sudo_cmd cp -p "$policy" "$saved"; fi
  restore_policy() { if [ -n "$saved" ]; then $sudo_cmd cp -p "$saved" "$policy"; rm -f "$saved"; else $sudo_cmd rm -f "$policy"; fi; }
  trap restore_policy EXIT
  # Units an init system may start for these packages (epmd comes with Erlang, RabbitMQ's
  # dependency); the ones already running before this install are left alone.
  units=(rabbitmq-server.service redis-server.service epmd.socket epmd.service)
  systemd=0; command -v systemctl >/dev/null && [ -d /run/systemd/system ] && systemd=1
  running_before=()
  if [ "$systemd" = 1 ]; then
    for unit in "${units[@]}"; do systemctl is-active --quiet "$unit" && running_before+=("$unit"); done
  fi
  printf '#!/bin/sh\nexit 101\n' | $sudo_cmd tee "$policy" >/dev/null
  $sudo_cmd chmod 755 "$policy"
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  restore_policy
  trap - EXIT
  # Where an init system started them anyway (a policy that was ours to replace, a systemd
  # preset), stop the units this install created: nothing system-wide is left listening.
  if [ "$systemd" = 1 ]; then
    for unit in "${units[@]}"; do
      case " ${running_before[*]-} " in *" $unit "*) continue ;; esac
      $sudo_cmd systemctl disable --now "$unit" >/dev/null 2>&1 || true
    done
  fi
fi
command -v swift >/dev/null || { echo "ops/install-deps: Swift 6 toolchain not found on PATH (see README)" >&2; exit 1; }
