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
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

module=$(go list -m)

# servers_for PACKAGE: the servers.sh names its tests use ("" for none).
servers_for() {
	case ${1#"$module"} in
	/store/etcd) echo etcd etcd-cluster ;;
	/store/zookeeper) echo zookeeper zookeeper-ensemble ;;
	/store/consul) echo consul ;;
	/store/redis) echo redis ;;
	/store/postgres) echo postgres ;;
	/store/open) echo etcd etcd-cluster redis postgres ;; # and its secured runs (open_runs)
	/cmd/leadership) echo plain ;;
	*) echo "" ;;
	esac
}

go vet ./...

mapfile -t packages < <(go list ./...)

if [[ ${LEADERSHIP_SERVERS:-1} == 0 ]]; then
	exec go test -race -count=1 -p 1 -timeout 40m "$@" ./...
fi

scripts/servers.sh install all
trap 'scripts/servers.sh stop >/dev/null 2>&1 || true' EXIT
export LEADERSHIP_RESTART_SERVERS=1

# Packages without servers first, in one go test run.
serverless=()
for p in "${packages[@]}"; do
	[[ -n $(servers_for "$p") ]] || serverless+=("$p")
done
failed=0
go test -race -count=1 -p 1 -timeout 40m "$@" "${serverless[@]}" || failed=1

# secured_runs: store/open's secured suites, one backend at a time, each
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

# run_with SERVERS PACKAGE [go test args]: the package's tests with only
# SERVERS running.
run_with() {
	local need=$1 p=$2
	shift 2
	scripts/servers.sh stop >/dev/null
	# shellcheck disable=SC2086
	scripts/servers.sh start $need
	(
		eval "$(scripts/servers.sh env)"
		go test -race -count=1 -timeout 40m "$@" "$p"
	)
}

# Then each backend package with its servers alone.
for p in "${packages[@]}"; do
	need=$(servers_for "$p")
	[[ -n $need ]] || continue
	if [[ $p == "$module/store/open" ]]; then
		run_with "$need" "$p" -skip '^(TestSecure|TestConsulTokenMasked)' "$@" || failed=1
		while IFS='|' read -r servers tests; do
			run_with "$servers" "$p" -run "$tests" "$@" || failed=1
		done < <(secured_runs)
		continue
	fi
	run_with "$need" "$p" "$@" || failed=1
done
exit "$failed"
