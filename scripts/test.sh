#!/usr/bin/env bash
# The whole test suite: go vet, then go test -race over every package.
# Extra arguments go to `go test` (for example -run or -count).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

go vet ./...
go test -race -count=1 "$@" ./...
