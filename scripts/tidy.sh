#!/usr/bin/env bash
# scripts/tidy.sh: go mod tidy in every module of the repository, the way
# users' builds resolve them: siblings at VERSION from a file-system proxy
# built from the tree (scripts/modproxy.sh), leaves first, the proxy
# rebuilt after each level so that a module's go.mod is the tidied one.
# The siblings' lines are then taken out of each go.sum: their hashes
# change with every commit until a release, and no build reads them (in
# the repository go.work resolves siblings from the tree; a user's build
# reads its own go.sum, never a dependency's).
#
#   scripts/tidy.sh --check   changes nothing: fails (exit 1) if a module is
#                             not tidy as users resolve it (go mod tidy -diff,
#                             siblings' go.sum lines aside), such as a require
#                             that only go.work made unnecessary
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
check=0
[[ ${1-} == --check ]] && check=1
levels=(
	". tools/release"
	"metrics/otel metrics/prometheus store/consul store/etcd store/kubernetes store/postgres store/redis store/zookeeper"
	"store/all"
	"cmd/leadership bench"
)
if ((check)); then
	eval "$(scripts/modproxy.sh "$tmp/check")"
	status=0
	for m in ${levels[*]}; do
		# A sibling's go.sum lines are left out of every go.sum on purpose.
		if ! diff=$(cd "$m" && go mod tidy -diff 2>&1); then
			if grep -E '^[-+][^-+]' <<<"$diff" | grep -vq 'github.com/leadership-go/leadership[/ ]'; then
				echo "scripts/tidy.sh --check: $m is not tidy (run scripts/tidy.sh):" >&2
				echo "$diff" >&2
				status=1
			fi
		fi
	done
	exit "$status"
fi
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
