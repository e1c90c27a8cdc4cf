#!/usr/bin/env bash
# The whole test suite: go vet, then go test -race over every package, one
# package at a time, with the real servers each needs (scripts/servers.sh,
# on 127.0.0.1) installed and started first. Extra arguments go to
# `go test` (-run, -v ...).
#
# A package runs with only the servers its tests use running (the table in
# servers_for): idle servers cost a starved machine's CPU (a 3-member etcd
# cluster heartbeats every 10 ms), and a PostgreSQL forking backends beside
# them answers late. Packages that need no server run with none.
#
# LEADERSHIP_SERVERS=0 skips the servers: the backend tests then skip
# themselves and only what needs no server runs.
#
# Every Go module of the repository with tests is tested: `./...` stops at
# a nested go.mod, so each module in the list below gets its own go vet and
# go test, run from its directory. Adding a module is one line there.
# `scripts/test.sh --modules` prints the list (.ci/run downloads each one's
# dependencies). Before the tests: the release set's consistency and the
# API check (tools/release); tools/release's own tests include the
# consumer test (every module published into a file-system proxy, a
# program per backend built outside the repository, go install at the
# version).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
# The modules require each other at VERSION, which is published only when
# a release tags it: in the repository go.work resolves them from the tree
# (docs/design.md, "Modules"). What users' builds resolve is the consumer
# test's (tools/release).
unset GOWORK

# modules: the directories of the Go modules this script tests, from the
# repository root.
modules=(
	.
	metrics/otel
	metrics/prometheus
	store/consul
	store/etcd
	store/kubernetes
	store/postgres
	store/redis
	store/zookeeper
	store/all
	cmd/leadership
	bench
	tools/release
)

# untested: modules with no tests, built elsewhere (tools/consul and
# tools/kube-apiserver: by `scripts/servers.sh install consul` and `install kube`).
untested=(
	tools/consul
	tools/kube-apiserver
)

if [[ ${1-} == --modules ]]; then
	printf '%s\n' "${modules[@]}"
	exit 0
fi

# A go.mod in neither list is a module nobody tests: say so rather than skip
# it (go.mod files under testdata are no modules to the go command).
gomods() {
	git ls-files --cached --others --exclude-standard -- go.mod '*/go.mod' 2>/dev/null ||
		find . -name go.mod -not -path './.*' -printf '%P\n'
}
while IFS= read -r gomod; do
	[[ $gomod != *testdata/* ]] || continue
	dir=$(dirname "$gomod")
	[[ " ${modules[*]} ${untested[*]} " == *" $dir "* ]] ||
		{ echo "scripts/test.sh: $dir/go.mod is in neither modules nor untested" >&2; exit 2; }
done < <(gomods)

module=github.com/leadership-go/leadership

# servers_for PACKAGE: the servers.sh names its tests use ("" for none).
servers_for() {
	case ${1#"$module"} in
	/store/etcd) echo etcd etcd-cluster ;;
	/store/zookeeper) echo zookeeper zookeeper-ensemble ;;
	/store/consul) echo consul ;;
	/store/redis) echo redis ;;
	/store/postgres) echo postgres ;;
	/store/all) echo etcd etcd-cluster redis postgres ;; # and its secured runs (secured_runs)
	/cmd/leadership) echo plain kube ;;
	/store/kubernetes | /store/kubernetes/*) echo kube ;;
	*) echo "" ;;
	esac
}

for m in "${modules[@]}"; do
	(cd "$m" && go vet ./...)
done
go -C tools/release run . check -root ../..
go -C tools/release run . api -root ../..
scripts/tidy.sh --check

failed=0
if [[ ${LEADERSHIP_SERVERS:-1} == 0 ]]; then
	for m in "${modules[@]}"; do
		(cd "$m" && go test -race -count=1 -p 1 -timeout 40m "$@" ./...) || failed=1
	done
	exit "$failed"
fi

# packages: "MODULE-DIR PACKAGE" per line, every package of every module.
packages=()
for m in "${modules[@]}"; do
	while IFS= read -r p; do
		packages+=("$m $p")
	done < <(cd "$m" && go list ./...)
done

scripts/servers.sh install all kube
trap 'scripts/servers.sh stop >/dev/null 2>&1 || true' EXIT
export LEADERSHIP_RESTART_SERVERS=1

# Packages without servers first, one go test run per module.
for m in "${modules[@]}"; do
	serverless=()
	for mp in "${packages[@]}"; do
		[[ ${mp%% *} == "$m" ]] || continue
		p=${mp#* }
		[[ -n $(servers_for "$p") ]] || serverless+=("$p")
	done
	((${#serverless[@]})) || continue
	(cd "$m" && go test -race -count=1 -p 1 -timeout 40m "$@" "${serverless[@]}") || failed=1
done

# The simulator's second CI share: the root package's own run takes seeds
# 1-100 (its default); these are 101-200, so that CI judges 200 seeds while
# `go test .` stays within two minutes. Skipped when arguments narrow the run.
if (($# == 0)); then
	go test -race -count=1 -timeout 40m -run '^TestSimulator$' . -sim.first=101 -sim.seeds=100 || failed=1
fi

# secured_runs: store/all's secured suites, one backend at a time, each
# beside only the servers it uses ("servers|tests" per line): a TLS
# handshake with a client certificate under -race is slow enough on a
# starved machine without nine idle servers beside it.
secured_runs() {
	cat <<-'RUNS'
		etcd-secure|^TestSecureEtcd$
		redis-secure|^TestSecureRedis
		postgres-secure|^TestSecurePostgres
		consul-secure consul|^(TestSecureConsul|TestConsulTokenMasked)
		zookeeper-secure|^TestSecureZookeeper$
	RUNS
}

# run_with SERVERS MODULE-DIR PACKAGE [go test args]: the package's tests
# with only SERVERS running.
run_with() {
	local need=$1 m=$2 p=$3
	shift 3
	scripts/servers.sh stop >/dev/null
	# A server that does not start fails the run: its tests would only
	# skip (run_with runs in an || list, where set -e does not stop it).
	# shellcheck disable=SC2086
	scripts/servers.sh start $need || { echo "scripts/test.sh: cannot start $need for $p" >&2; return 1; }
	(
		eval "$(scripts/servers.sh env)"
		cd "$m"
		go test -race -count=1 -timeout 40m "$@" "$p"
	)
}

# Then each backend package with its servers alone.
for mp in "${packages[@]}"; do
	m=${mp%% *} p=${mp#* }
	need=$(servers_for "$p")
	[[ -n $need ]] || continue
	if [[ $p == "$module/store/all" ]]; then
		run_with "$need" "$m" "$p" -skip '^(TestSecure|TestConsulTokenMasked)' "$@" || failed=1
		while IFS='|' read -r servers tests; do
			run_with "$servers" "$m" "$p" -run "$tests" "$@" || failed=1
		done < <(secured_runs)
		continue
	fi
	run_with "$need" "$m" "$p" "$@" || failed=1
done
exit "$failed"
