#!/usr/bin/env bash
# Builds the Go example offline from Debian's packages (golang-go, golang-github-rabbitmq-amqp091-go-dev):
# GOPATH mode finds amqp091-go among the sources the -dev package installs, so no module proxy is
# asked. Usage: examples/go/build.sh [OUTPUT]   (default: .build/examples/publish_job, not committed)
# With network access, a module build works as usual instead:
#   go mod init example/publish && go get github.com/rabbitmq/amqp091-go && go build
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "${1:-$here/../../.build/examples/publish_job}")
mkdir -p "$(dirname "$out")"
cd "$here"
# Go needs a build cache folder: without HOME (a bare CI environment) it would refuse to build.
[ -n "${HOME:-}${GOCACHE:-}" ] || export GOCACHE=/tmp/pushworker-go-cache
GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= GOPROXY=off go build -o "$out" .
echo "$out"
