#!/usr/bin/env bash
# The end-to-end demo on local defaults: installs what is missing, builds, starts RabbitMQ and
# Redis (loopback), the APNs sandbox and one worker, publishes example jobs from Python, the shell
# and the CLI, and shows the notifications arriving at the sandbox and the events coming back.
# Everything it started is stopped at the end (RabbitMQ/Redis only if it started them).
set -euo pipefail
cd "$(dirname "$0")/.."
ops/install-deps.sh
echo "== building (ops/build-release.sh)"
bin=$(ops/build-release.sh)

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
stop_services=0
port_open 5672 && port_open 6379 || stop_services=1
ops/services.sh start

state=.pushworker
mkdir -p "$state"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait "${pids[@]}" 2>/dev/null || true
  if [ "$stop_services" = 1 ]; then ops/services.sh stop; fi
}
trap cleanup EXIT

echo "== starting the APNs sandbox on 127.0.0.1:2197 (it prints each notification it accepts)"
"$bin" sandbox --port 2197 --state-directory "$state/sandbox" --log-notifications \
  --rule '{"token":"'"$(printf 'dead%.0s' {1..16})"'","status":410,"reason":"Unregistered"}' \
  --rule '{"tokenPrefix":"5035","status":503,"reason":"ServiceUnavailable","times":1}' &
pids+=($!)
for _ in $(seq 1 100); do [ -f "$state/sandbox/ca.pem" ] && port_open 2197 && break; sleep 0.1; done

echo "== the worker's configuration file ($state/pushworker.yaml; examples/pushworker.yaml shows every key)"
# The sandbox made its CA and token key at start: the file names them.
cat > "$state/pushworker.yaml" <<YAML
amqp:
  url: amqp://guest:guest@127.0.0.1:5672/
redis:
  url: redis://127.0.0.1:6379/0
worker:
  retry_delays: [1s, 5s]
apps:
  - name: default
    platform: apns
    url: https://127.0.0.1:2197          # the sandbox instead of api.push.apple.com
    ca_file: $state/sandbox/ca.pem
    topic: com.example.app
    token:
      key_file: $state/sandbox/token-key.p8
      key_id: SANDBOXKEY
      team_id: SANDBOXTM1
YAML
"$bin" config check "$state/pushworker.yaml"

echo "== starting a worker (token auth with the sandbox's generated key)"
"$bin" run --config "$state/pushworker.yaml" &
pids+=($!)

echo "== subscribing to push.results (Python, pika)"
/usr/bin/python3 examples/python/subscribe_events.py --queue demo.events --seconds 8 &
subscriber=$!
pids+=($subscriber)
sleep 1

good=$(printf '0123456789abcdef%.0s' {1..4})
dead=$(printf 'dead%.0s' {1..16})
flaky=5035$(printf 'ab%.0s' {1..30})
echo "== a group of three devices in Redis"
"$bin" groups add default news "$good" "$(printf 'a1%.0s' {1..32})" "$(printf 'b2%.0s' {1..32})"
echo "== publishing jobs"
/usr/bin/python3 examples/python/publish_job.py "$good" "$dead" --group news --alert "Hello from Python"
examples/shell/publish_job.sh "$flaky" "Hello from the shell (first attempt gets 503, the retry succeeds)"
"$bin" send --token "$good" --alert "Hello from pushworker send" --priority 5
amqp-publish -u amqp://guest:guest@127.0.0.1:5672 -r push.jobs -p -C application/json -b '{"tokens":["not-a-token"],"payload":{}}'

sleep 8
# The subscriber stops by itself (--seconds); if it failed, the application's side of the demo is broken.
if ! wait "$subscriber"; then echo "ops/demo: the event subscriber failed (see above)" >&2; exit 1; fi
echo "== done: the sandbox lines above are the notifications APNs would have delivered; the"
echo "   subscriber lines are the events your application receives. A rejected job is in push.jobs.dead."
