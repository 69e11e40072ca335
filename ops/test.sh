#!/usr/bin/env bash
# The test command: installs what is missing, starts loopback RabbitMQ and Redis (unless they
# already answer), builds, and runs every test suite. Stops only the services it started.
# They listen on ports of their own, 5682 and 6389, so a developer's broker or Redis on the
# standard ports is neither used nor disturbed (and the tests' rabbitmqctl calls reach the node
# ops/services.sh named for that port). AMQP_PORT / REDIS_PORT, or AMQP_URL / REDIS_URL, choose others.
set -euo pipefail
cd "$(dirname "$0")/.."
ops/install-deps.sh
# In a second: no test may check a closure literal inside #expect/#require within a closure, which
# this toolchain miscompiles (the script says how).
/usr/bin/python3 ops/check-expect-closures
ops/python-peers.sh
ops/deploy-tools.sh
export AMQP_PORT=${AMQP_PORT:-5682} REDIS_PORT=${REDIS_PORT:-6389}
started=()
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port_open "$AMQP_PORT" || started+=(rabbitmq)
port_open "$REDIS_PORT" || started+=(redis)
ops/services.sh start
if ((${#started[@]})); then trap 'ops/services.sh stop' EXIT; fi
export AMQP_URL=${AMQP_URL:-amqp://guest:guest@127.0.0.1:$AMQP_PORT/}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:$REDIS_PORT/0}
# One build, under AddressSanitizer (README "Delivery guarantees"): every test, then the fault suite
# (crashes, restarts, broken connections, bad input, its own RabbitMQ and Redis on 5673/6380) with
# ASan-built workers and sandbox; any sanitizer report fails. A second, plain debug build would only
# repeat the same tests without the checks, and cost CI four minutes. SANITIZE=0 runs the plain
# debug build instead (the faults then use it too); FAULTS=0 skips the fault suite. Between the
# tests and the faults, ops/examples-check runs the publisher examples and ops/gateway-check the
# gateway (HTTP, the relay, pushd UDP, schemathesis) against a worker of that build (README
# "Publishing", "The gateway"); EXAMPLES=0 skips them.
if [ "${SANITIZE:-1}" != 0 ]; then
  # Not exec: the trap above must still stop the services this script started.
  if [ "${FAULTS:-1}" != 0 ]; then ops/sanitize address "$@"; else ops/sanitize address --no-faults "$@"; fi
  exit 0
fi
# Keep the log readable: progress lines out, warnings and errors in.
set +o pipefail
swift build --build-tests 2>&1 | grep -Ev '^\[[0-9]+/[0-9]+\] ' ; build_status=${PIPESTATUS[0]}
set -o pipefail
[ "$build_status" -eq 0 ] || { echo "ops/test.sh: build failed" >&2; exit "$build_status"; }
# Four tests at a time, as in ops/sanitize: all at once starves the integration tests on 2 cores.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-4}
if (($#)); then
  swift test --skip-build "$@"
else
  # As in ops/sanitize: the shared provider token's clock-driven test runs alone, after the rest.
  swift test --skip-build --skip SharedProviderTokenTests --skip ReloadFanOutTests --skip AppIsolationTests
  swift test --skip-build --filter "SharedProviderTokenTests|ReloadFanOutTests|AppIsolationTests"
fi
if [ "${EXAMPLES:-1}" != 0 ]; then
  /usr/bin/python3 ops/examples-check --binary "$(swift build --show-bin-path)/pushworker"
  /usr/bin/python3 ops/examples-check --binary "$(swift build --show-bin-path)/pushworker" --queue-type quorum
  ops/gateway-check --binary "$(swift build --show-bin-path)/pushworker"
  ops/deploy-check --static-only --binary "$(swift build --show-bin-path)/pushworker"
fi
if [ "${FAULTS:-1}" != 0 ]; then
  /usr/bin/python3 ops/faults --quick --cluster
  /usr/bin/python3 ops/redis-ha --only sentinel,cluster --binary "$(swift build --show-bin-path)/pushworker"
fi
