#!/usr/bin/env bash
# Starts (or stops) a loopback-only RabbitMQ and Redis as plain background processes, with their
# data under one state folder. `stop` ends only the processes this script started (their pid files).
#   ops/services.sh start | stop | status
# Env: PUSHWORKER_SERVICES_DIR (default /tmp/pushworker-services), AMQP_PORT (5672), REDIS_PORT (6379).
set -euo pipefail
dir=${PUSHWORKER_SERVICES_DIR:-/tmp/pushworker-services}
amqp_port=${AMQP_PORT:-5672}
redis_port=${REDIS_PORT:-6379}
# One pid file per port: the test command's instances (5682, 6389) may run beside these.
redis_pid="$dir/redis/redis-$redis_port.pid"
rabbit_pid="$dir/rabbitmq/server-$amqp_port.pid"
mkdir -p "$dir"

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

rabbit_env() {
  export HOME="$dir/rabbitmq"                     # the Erlang cookie lives here, not in /var/lib
  # One node name per port, so a second instance (the fault suite's) can run beside the first.
  if [ "$amqp_port" = 5672 ]; then export RABBITMQ_NODENAME="pushworker@localhost"; else export RABBITMQ_NODENAME="pushworker-$amqp_port@localhost"; fi
  export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
  export RABBITMQ_NODE_PORT="$amqp_port"
  export RABBITMQ_DIST_PORT=$((amqp_port + 20000))
  export ERL_EPMD_ADDRESS=127.0.0.1
  export RABBITMQ_MNESIA_BASE="$dir/rabbitmq/mnesia"
  export RABBITMQ_LOG_BASE="$dir/rabbitmq/log"
  export RABBITMQ_ENABLED_PLUGINS_FILE="$dir/rabbitmq/enabled_plugins"
  export RABBITMQ_CONFIG_FILE="$dir/rabbitmq/rabbitmq"   # .conf is appended
  export RABBITMQ_PID_FILE="$dir/rabbitmq/rabbitmq-$amqp_port.pid"
  # Erlang schedulers spin while idle by default; on a small machine shared with the worker that
  # spinning takes CPU the worker and the sandbox need (RabbitMQ's advice for shared hosts).
  export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="+sbwt none +sbwtdcpu none +sbwtdio none"
  mkdir -p "$HOME" "$RABBITMQ_MNESIA_BASE" "$RABBITMQ_LOG_BASE"
  [ -f "$RABBITMQ_ENABLED_PLUGINS_FILE" ] || echo "[]." > "$RABBITMQ_ENABLED_PLUGINS_FILE"
  # Written every time: a directory reused with another port kept the old listener otherwise.
  printf 'loopback_users = none\nlisteners.tcp.default = 127.0.0.1:%s\n' "$amqp_port" > "$RABBITMQ_CONFIG_FILE.conf"
}

wait_for() { # name, seconds, command...
  local name=$1 secs=$2; shift 2
  for ((i = 0; i < secs * 4; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.25; done
  echo "ops/services: $name did not come up within ${secs}s; see $dir" >&2; return 1
}

start_redis() {
  if port_open "$redis_port"; then echo "redis: already answering on 127.0.0.1:$redis_port (reused)"; return; fi
  mkdir -p "$dir/redis"
  redis-server --bind 127.0.0.1 --port "$redis_port" --dir "$dir/redis" --save "" --appendonly no \
    --daemonize no --logfile "$dir/redis/redis.log" >/dev/null 2>&1 &
  echo $! > "$redis_pid"
  wait_for redis 20 redis-cli -h 127.0.0.1 -p "$redis_port" ping
  echo "redis: started on 127.0.0.1:$redis_port (pid $(cat "$redis_pid"))"
}

start_rabbitmq() {
  if port_open "$amqp_port"; then echo "rabbitmq: already answering on 127.0.0.1:$amqp_port (reused)"; return; fi
  rabbit_env
  pgrep -x epmd >/dev/null || { epmd -address 127.0.0.1 -daemon; touch "$dir/rabbitmq/epmd.started"; }
  /usr/lib/rabbitmq/bin/rabbitmq-server > "$RABBITMQ_LOG_BASE/startup.log" 2>&1 &
  echo $! > "$rabbit_pid"
  wait_for rabbitmq 90 /usr/lib/rabbitmq/bin/rabbitmqctl -q -n "$RABBITMQ_NODENAME" await_startup
  wait_for rabbitmq-port 30 port_open "$amqp_port"
  # Classic queues with the v2 storage (RabbitMQ's recommendation since 3.10, the only one from
  # 4.0): half the broker CPU per persistent message of v1. README "Running a worker".
  /usr/lib/rabbitmq/bin/rabbitmqctl -q -n "$RABBITMQ_NODENAME" set_policy classic-queues-v2 '.*' \
    '{"queue-version":2}' --apply-to queues >/dev/null
  echo "rabbitmq: started on 127.0.0.1:$amqp_port (pid $(cat "$rabbit_pid"))"
}

stop_pidfile() { # file
  local f=$1
  [ -f "$f" ] || return 0
  local pid; pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for ((i = 0; i < 60; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

stop_rabbitmq() {
  [ -f "$rabbit_pid" ] || return 0
  rabbit_env
  /usr/lib/rabbitmq/bin/rabbitmqctl -q -n "$RABBITMQ_NODENAME" stop >/dev/null 2>&1 || true
  stop_pidfile "$rabbit_pid"
  # The Erlang VM is a child of the start script; end what is still tied to our node name.
  pkill -f -- "-sname $RABBITMQ_NODENAME" 2>/dev/null || true
  # epmd serves every node on this machine: ended only when this script started it and no node is left.
  if [ -f "$dir/rabbitmq/epmd.started" ] && ! epmd -names 2>/dev/null | grep -q "^name "; then
    epmd -kill >/dev/null 2>&1 || true
    rm -f "$dir/rabbitmq/epmd.started"
  fi
  echo "rabbitmq: stopped"
}

case "${1:-start}" in
  start) start_redis; start_rabbitmq ;;
  stop) stop_pidfile "$redis_pid" && echo "redis: stopped"; stop_rabbitmq ;;
  restart-rabbitmq) stop_rabbitmq; start_rabbitmq ;;
  restart-redis) stop_pidfile "$redis_pid"; start_redis ;;
  status)
    port_open "$redis_port" && echo "redis: up on $redis_port" || echo "redis: down"
    port_open "$amqp_port" && echo "rabbitmq: up on $amqp_port" || echo "rabbitmq: down" ;;
  *) echo "usage: $0 start|stop|status|restart-rabbitmq|restart-redis" >&2; exit 2 ;;
esac
