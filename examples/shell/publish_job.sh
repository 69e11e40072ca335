#!/usr/bin/env bash
# Publish a job from the shell with amqp-publish (Debian amqp-tools). Usage: publish_job.sh TOKEN [ALERT]
set -euo pipefail
token=${1:?usage: publish_job.sh TOKEN [ALERT]}
alert=${2:-Hello from the shell}
# amqp-tools reads a trailing "/" as an empty vhost name: leave it off.
url=${PUSHWORKER_AMQP_URL:-amqp://guest:guest@127.0.0.1:5672}
url=${url%/}
body=$(printf '{"tokens":["%s"],"payload":{"aps":{"alert":"%s"}}}' "$token" "$alert")
amqp-publish -u "$url" -r push.jobs -p -C application/json -b "$body"
echo "published: $body"
