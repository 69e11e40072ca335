#!/usr/bin/env bash
# The end-to-end demo on local defaults: installs what is missing, builds, starts RabbitMQ and
# Redis (loopback), the APNs sandbox with its FCM and Web Push services, and one worker serving an
# APNs app, an FCM app and a Web Push app; publishes example jobs from Python, the shell and the
# CLI, and shows the notifications arriving at the sandboxes (Web Push messages decrypted) and the
# events coming back.
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

echo "== starting the sandbox: APNs on 127.0.0.1:2197, FCM (with its OAuth token endpoint) on :2198, Web Push on :8443"
"$bin" sandbox --port 2197 --fcm-port 2198 --webpush-port 8443 --state-directory "$state/sandbox" --log-notifications \
  --rule '{"token":"'"$(printf 'dead%.0s' {1..16})"'","status":410,"reason":"Unregistered"}' \
  --rule '{"tokenPrefix":"5035","status":503,"reason":"ServiceUnavailable","times":1}' &
pids+=($!)
# Up when its ports answer and its files are written: the FCM key file comes after the port it
# names, and on a first start after the key is made (RSA, which can take a second).
sandbox_ready() {
  [ -f "$state/sandbox/ca.pem" ] && port_open 2197 && port_open 2198 && port_open 8443 &&
    /usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$state/sandbox/fcm-service-account.json" 2>/dev/null
}
for _ in $(seq 1 300); do sandbox_ready && break; sleep 0.1; done
sandbox_ready || { echo "ops/demo.sh: the sandbox was not up after 30 s (its log above)" >&2; exit 1; }

echo "== a VAPID key pair for the Web Push app (pushworker webpush keys): browsers subscribe with the public key"
eval "$("$bin" webpush keys --shell)"
export VAPID_PRIVATE_KEY   # the file names the variable, never the key

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
  - name: android
    platform: fcm
    service_account: {file: $state/sandbox/fcm-service-account.json}   # the sandbox's; Google's console gives yours
    url: https://127.0.0.1:2198          # the sandbox instead of fcm.googleapis.com
    ca_file: $state/sandbox/ca.pem
  - name: web
    platform: webpush                    # each subscription's endpoint names its push service
    ca_file: $state/sandbox/ca.pem       # the sandbox's push service
    allow_private_endpoints: true        # the sandbox is on 127.0.0.1: off, such endpoints are refused
    allowed_endpoint_ports: [8443]       # and on port 8443 (443 only by default)
    vapid:
      private_key: {env: VAPID_PRIVATE_KEY}
      public_key: $VAPID_PUBLIC_KEY
      subject: mailto:demo@example.com
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
# A rerun starts from empty groups: subscriptions of an earlier run's sandbox would be 404s now.
redis-cli -h 127.0.0.1 -p 6379 DEL group:default:news group:web:readers group:android:phones >/dev/null
"$bin" groups add default news "$good" "$(printf 'a1%.0s' {1..32})" "$(printf 'b2%.0s' {1..32})"
echo "== three browser subscriptions, made by the Web Push sandbox as pushManager.subscribe() would; the third unsubscribes"
subscriptions=$(curl -sS --cacert "$state/sandbox/ca.pem" -X POST https://127.0.0.1:8443/_sandbox/webpush/subscriptions \
  -d '{"count":3,"applicationServerKey":"'"$VAPID_PUBLIC_KEY"'"}')
# The compact form <endpoint>#p256dh=…&auth=… is one string: for tokens, groups and command lines.
mapfile -t browser < <(/usr/bin/python3 -c 'import json, sys
for s in json.load(sys.stdin): print(s["endpoint"] + "#p256dh=" + s["keys"]["p256dh"] + "&auth=" + s["keys"]["auth"])' <<<"$subscriptions")
gone_id=$(/usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)[2]["id"])' <<<"$subscriptions")
curl -sS --cacert "$state/sandbox/ca.pem" -X DELETE "https://127.0.0.1:8443/_sandbox/webpush/subscriptions/$gone_id" >/dev/null
"$bin" groups add web readers --platform webpush "${browser[1]}"
echo "== an Android group: FCM registration tokens; the sandbox answers UNREGISTERED for the one starting with gone-"
curl -sS --cacert "$state/sandbox/ca.pem" -X PUT https://127.0.0.1:2198/_sandbox/rules \
  -d '[{"tokenPrefix":"gone-","status":404,"reason":"UNREGISTERED"}]' >/dev/null
"$bin" groups add android phones --platform fcm "fcm-token-of-a-pixel-0123456789abcdef" "gone-fcm-token-0123456789abcdef"
echo "== publishing jobs"
/usr/bin/python3 examples/python/publish_job.py "$good" "$dead" --group news --alert "Hello from Python"
examples/shell/publish_job.sh "$flaky" "Hello from the shell (first attempt gets 503, the retry succeeds)"
"$bin" send --token "$good" --alert "Hello from pushworker send" --priority 5
amqp-publish -u amqp://guest:guest@127.0.0.1:5672 -r push.jobs -p -C application/json -b '{"tokens":["not-a-token"],"payload":{}}'
# The same job shape for the FCM app: its devices are registration tokens, its payload FCM's message without the token.
amqp-publish -u amqp://guest:guest@127.0.0.1:5672 -r push.jobs -p -C application/json \
  -b '{"app":"android","tokens":["fcm-token-of-a-galaxy-0123456789abcdef"],"groups":["phones"],"priority":10,"expiration":"+3600","payload":{"notification":{"title":"Hello from FCM","body":"to every Android phone"},"data":{"story":"42"}}}'
# The same job shape for the Web Push app: its devices are subscriptions, its payload what the browser's service worker gets.
amqp-publish -u amqp://guest:guest@127.0.0.1:5672 -r push.jobs -p -C application/json \
  -b '{"app":"web","tokens":["'"${browser[0]}"'","'"${browser[2]}"'"],"groups":["readers"],"priority":10,"collapse_id":"greeting","payload":{"title":"Hello from Web Push","body":"encrypted for each browser"}}'

sleep 8
# The subscriber stops by itself (--seconds); if it failed, the application's side of the demo is broken.
if ! wait "$subscriber"; then echo "ops/demo: the event subscriber failed (see above)" >&2; exit 1; fi
echo "== what the FCM sandbox accepted (its record, as JSON lines)"
curl -sS --cacert "$state/sandbox/ca.pem" https://127.0.0.1:2198/_sandbox/received | cut -c1-160
echo "== done: the sandbox lines above are the notifications APNs would have delivered, what FCM"
echo "   accepted, and the Web Push messages as the browsers decrypted them (the unsubscribed browser and"
echo "   the unregistered phone are token.invalid events); the subscriber lines are the events your"
echo "   application receives. A rejected job is in push.jobs.dead."
