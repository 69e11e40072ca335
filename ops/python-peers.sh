#!/usr/bin/env bash
# The Python peers the tests check our Web Push and VAPID output against (code that is not ours):
# http-ece decrypts our aes128gcm bodies, PyJWT verifies our ES256 tokens; pywebpush and
# google-auth are for the FCM and sender comparisons; schemathesis checks the gateway against its
# OpenAPI document (docs/reference/gateway-openapi.yaml). Pinned, in a venv of their own at
# .build/python-peers so that Debian's python3 stays untouched; the venv sees the system packages
# (python3-cryptography). Idempotent: does nothing when the pinned versions are already there.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build/python-peers
pins=(http-ece==1.2.1 pywebpush==2.5.0 PyJWT==2.15.1 google-auth==2.62.2 schemathesis==4.32.5)
# Debian's interpreter, not one earlier on PATH: python3-venv and the system packages are its.
python=/usr/bin/python3
installed() {
  [ -x "$venv/bin/python3" ] || return 1
  local frozen
  frozen=$("$venv/bin/python3" -m pip freeze --disable-pip-version-check 2>/dev/null) || return 1
  local pin
  for pin in "${pins[@]}"; do
    grep -qix "$pin" <<<"$frozen" || grep -qix "${pin//-/_}" <<<"$frozen" || return 1
  done
}
if installed; then exit 0; fi
echo "ops/python-peers: creating $venv with ${pins[*]}"
[ -x "$venv/bin/python3" ] || "$python" -m venv --system-site-packages "$venv"
"$venv/bin/python3" -m pip install --quiet --disable-pip-version-check "${pins[@]}"
installed || { echo "ops/python-peers: $venv does not hold ${pins[*]} after installing" >&2; exit 1; }
