#!/usr/bin/env bash
# scripts/tidy.sh: go mod tidy in every module of the repository, the way
# users' builds resolve them: siblings at VERSION from a file-system proxy
# built from the tree (scripts/modproxy.sh), leaves first, the proxy
# rebuilt after each level so that a module's go.mod is the tidied one.
# The siblings' lines are then taken out of each go.sum: their hashes
# change with every commit until a release, and no build reads them (in
# the repository go.work resolves siblings from the tree; a user's build
# reads its own go.sum, never a dependency's).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
levels=(
	". tools/release"
	"metrics/otel metrics/prometheus store/consul store/etcd store/kubernetes store/postgres store/redis store/zookeeper"
	"store/all"
	"cmd/leadership bench"
)
for level in "${levels[@]}"; do
	(
		eval "$(scripts/modproxy.sh "$tmp/$RANDOM")"
		for m in $level; do
			echo "tidy $m" >&2
			(cd "$m" && go mod tidy)
			sed -i '/^github.com\/leadership-go\/leadership[/ ]/d' "$m/go.sum"
		done
	)
done
