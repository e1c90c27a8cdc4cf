#!/usr/bin/env bash
# The whole test suite: installs and starts the real servers the backend
# tests need (scripts/servers.sh, on 127.0.0.1), then go vet and
# go test -race over every package, one package at a time (some tests stop
# and restart the servers). Extra arguments go to `go test` (-run, -v ...).
#
# LEADERSHIP_SERVERS=0 skips the servers: the backend tests then skip
# themselves and only what needs no server runs.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

if [[ ${LEADERSHIP_SERVERS:-1} != 0 ]]; then
	scripts/servers.sh install all
	trap 'scripts/servers.sh stop >/dev/null 2>&1 || true' EXIT
	scripts/servers.sh start all
	eval "$(scripts/servers.sh env)"
	export LEADERSHIP_RESTART_SERVERS=1
fi

go vet ./...
go test -race -count=1 -p 1 -timeout 40m "$@" ./...
