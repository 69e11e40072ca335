#!/usr/bin/env bash
# Print result events from the shell with amqp-consume (Debian amqp-tools). Usage: tail_events.sh [COUNT]
set -euo pipefail
# amqp-tools reads a trailing "/" as an empty vhost name: leave it off.
url=${PUSHWORKER_AMQP_URL:-amqp://guest:guest@127.0.0.1:5672}
url=${url%/}
count=${1:-0}
args=(-u "$url" -e push.results -r '#' -x)
[ "$count" -gt 0 ] && args+=(-c "$count")
# "--": amqp-consume's option parser would take sh's -c for its own --count.
amqp-consume "${args[@]}" -- sh -c 'cat; echo'
