#!/usr/bin/env bash
# Publish a job from the shell with amqp-tools and print its events ("<routing key> <json>", filtered
# with jq) until job.completed or job.rejected. Usage: publish_job.sh TOKEN [ALERT]
# Env: PUSHWORKER_AMQP_URL, PUSHWORKER_JOB_QUEUE (push.jobs), PUSHWORKER_EVENT_TIMEOUT (30 s).
set -euo pipefail
token=${1:?usage: publish_job.sh TOKEN [ALERT]}
alert=${2:-Hello from the shell}
# amqp-tools reads a trailing "/" as an empty vhost name: leave it off.
url=${PUSHWORKER_AMQP_URL:-amqp://guest:guest@127.0.0.1:5672}
url=${url%/}
queue=${PUSHWORKER_JOB_QUEUE:-push.jobs}
timeout=${PUSHWORKER_EVENT_TIMEOUT:-30}
id=$(cat /proc/sys/kernel/random/uuid)
body=$(jq -cn --arg id "$id" --arg token "$token" --arg alert "$alert" \
  '{id: $id, app: "default", tokens: [$token], payload: {aps: {alert: $alert}}}')

# A queue of our own for the events: amqp-consume declares it (auto-delete, so it goes with the
# consumer) and binds it to push.results.
events=pushworker.example.$id
coproc consumer { exec amqp-consume -u "$url" -q "$events" -e push.results -r '#' -A -- sh -c 'tr -d "\n"; echo'; }
trap 'kill "${consumer_PID:-}" 2>/dev/null; amqp-delete-queue -u "$url" -q "$events" >/dev/null 2>&1' EXIT
# It binds, then consumes: a probe sent straight to the queue arrives once the binding holds (one
# sent before the queue exists is dropped, hence the repeats).
for ((try = 0; ; try++)); do
  ((try < 50)) || { echo "the events queue did not answer within 10s" >&2; exit 1; }
  amqp-publish -u "$url" -r "$events" -b '{}'
  read -r -t 0.2 _ <&"${consumer[0]}" && break
done

# amqp-publish has neither publisher confirms nor mandatory: it exits 0 once the broker took the
# message over the connection, and a message no queue takes is dropped. Declaring the (durable) job
# queue first leaves it a queue to go to; the job's "id" field names it (no message_id option).
# amqp-tools cannot declare passively, and a quorum job queue refuses any declaration but the
# workers' (406): with PUSHWORKER_QUEUE_TYPE=quorum it is left to them.
if [ "${PUSHWORKER_QUEUE_TYPE:-classic}" = classic ]; then
  amqp-declare-queue -u "$url" -q "$queue" -d >/dev/null
fi
amqp-publish -u "$url" -r "$queue" -p -C application/json -b "$body"
echo "published job $id"

# Each event body names its routing key in "event".
deadline=$((SECONDS + timeout))
while read -r -t "$((deadline > SECONDS ? deadline - SECONDS : 1))" event <&"${consumer[0]}"; do
  key=$(jq -r --arg id "$id" 'select(.job_id == $id) | .event' <<<"$event")
  [ -n "$key" ] || continue
  echo "$key $event"
  case $key in job.completed|job.rejected) exit 0 ;; esac
done
echo "no job.completed or job.rejected for job $id within ${timeout}s" >&2
exit 1
