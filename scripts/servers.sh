#!/usr/bin/env bash
# scripts/servers.sh: install, start and stop the REAL servers the leadership
# tests run against, on 127.0.0.1 only. See scripts/README.md.
#
#   servers.sh install [all|etcd|zookeeper|redis|postgres|consul|kube]...
#   servers.sh start   NAME...      (NAME: etcd etcd-cluster zookeeper
#                                    zookeeper-ensemble redis postgres consul,
#                                    the secured ones (scripts/secure/: etcd-secure,
#                                    redis-secure, ...), plain, secure, all;
#                                    kube only by name: install kube first)
#   servers.sh stop    [--wipe] [NAME...]    (default: all)
#   servers.sh restart [--wipe] NAME...      (--wipe: delete their data)
#   servers.sh kill    NAME [INDEX|leader]   (SIGKILL one member, default 1)
#   servers.sh env | status | etcd-leader | zk-leader | clean
#
# Processes are started in the background with their PID recorded under the
# state dir, and are only ever stopped through those PID files.
set -euo pipefail

# The state dir holds PID files, certificates (ensure_certs reuses a CA it
# finds there), passwords and data: one per user, mode 0700 (see
# secure_dir). Run as root, PostgreSQL's server runs as the postgres user,
# which cannot enter it: its data dir, socket, log and setup binary live in
# PG_STATE instead, a sibling owned by postgres, mode 0700 (see wdir).
STATE=${LEADERSHIP_STATE:-${TMPDIR:-/tmp}/leadership-servers-$(id -u)}
if [[ $EUID -eq 0 ]]; then
	PG_STATE=${LEADERSHIP_PG_STATE:-$STATE-postgres}
else
	PG_STATE=$STATE
fi
START_TIMEOUT=${LEADERSHIP_START_TIMEOUT:-60}   # seconds to wait for a round trip
STOP_GRACE=${LEADERSHIP_STOP_GRACE:-10}         # seconds before SIGKILL on stop
LEADER_TIMEOUT=${LEADERSHIP_LEADER_TIMEOUT:-10} # seconds etcd-leader/zk-leader wait

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(dirname -- "$SCRIPT_DIR")

CONSUL_VERSION=1.20.6
CONSUL_BIN=${LEADERSHIP_CONSUL_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/leadership/consul-v$CONSUL_VERSION/consul}

# kube-apiserver, built from the module proxy by tools/kube-apiserver (its
# go.mod pins k8s.io/kubernetes and the staging modules' releases).
KUBE_VERSION=1.37.2
KUBE_BIN=${LEADERSHIP_KUBE_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/leadership/kube-apiserver-v$KUBE_VERSION/kube-apiserver}

PG_BIN=/usr/lib/postgresql/15/bin
ZK_CP=/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar

# Fixed loopback ports, all in the 23xxx block (see scripts/README.md).
ETCD_CLIENT=23379
ETCD_PEER=23380
ETCD_CLUSTER_CLIENT=(23311 23312 23313)
ETCD_CLUSTER_PEER=(23321 23322 23323)
ZK_CLIENT=23181
ZK_ENS_CLIENT=(23111 23112 23113)
ZK_ENS_QUORUM=(23121 23122 23123)
ZK_ENS_ELECTION=(23131 23132 23133)
REDIS_PORT=23679
PG_PORT=23432
PG_DB=leadership
CONSUL_HTTP=23500
CONSUL_SERVER=23300
CONSUL_SERF_LAN=23301
CONSUL_SERF_WAN=23302
KUBE_PORT=23443         # kube-apiserver, HTTPS
KUBE_ETCD_CLIENT=23479  # kube's own etcd member
KUBE_ETCD_PEER=23480
KUBE_NAMESPACE=leadership
KUBE_IDENTITIES=(admin candidate follower norights)

ALL_SERVERS=(etcd etcd-cluster zookeeper zookeeper-ensemble redis postgres consul)

# Servers started by name only: "all" and "plain" do not start them (kube
# needs a long build first), but stop, status and env include them.
OPTIONAL_SERVERS=(kube)

# Secured servers (TLS, client certificates, authentication, least-privilege
# users), one file each in scripts/secure/, started beside the plaintext
# ones on ports of the 24xxx block. Each file appends its name to
# SECURE_SERVERS and defines start_NAME, check_NAME and env_NAME (NAME with
# dashes as underscores). Their certificates come from ensure_certs.
SECURE_SERVERS=()
CERTS_DIR=${LEADERSHIP_CERTS:-$STATE/certs}

export ETCDCTL_API=3

# ---------------------------------------------------------------- helpers --

# ensure_certs writes the throwaway CA, server and client certificates
# (internal/tools/mkcerts) into CERTS_DIR once per state directory; they
# are never committed.
ensure_certs() {
	secure_dir "$CERTS_DIR" "$(id -u)" LEADERSHIP_CERTS
	[[ -f $CERTS_DIR/ca.crt && -f $CERTS_DIR/expired-server.key ]] && return 0
	(cd "$REPO_DIR" && go run ./internal/tools/mkcerts "$CERTS_DIR") || die "mkcerts failed"
}

log() { printf '[servers] %s\n' "$*" >&2; }
die() { printf '[servers] ERROR: %s\n' "$*" >&2; exit 1; }
now_ms() { date +%s%3N; }
elapsed() { local ms=$(( $(now_ms) - $1 )); printf '%d.%02ds' $((ms / 1000)) $((ms % 1000 / 10)); }

valid_server() {
	local s
	for s in "${ALL_SERVERS[@]}" "${SECURE_SERVERS[@]}" "${OPTIONAL_SERVERS[@]}"; do [[ $1 == "$s" ]] && return 0; done
	return 1
}

# EXPAND_OPTIONAL=1 makes "all" include OPTIONAL_SERVERS (stop does).
EXPAND_OPTIONAL=""


expand_names() { # NAME... -> validated list on stdout ("all" expands)
	local n
	for n in "$@"; do
		if [[ $n == all ]]; then
			printf '%s\n' "${ALL_SERVERS[@]}" "${SECURE_SERVERS[@]}"
			[[ -z $EXPAND_OPTIONAL ]] || printf '%s\n' "${OPTIONAL_SERVERS[@]}"
		elif [[ $n == plain ]]; then
			printf '%s\n' "${ALL_SERVERS[@]}"
		elif [[ $n == secure ]]; then
			printf '%s\n' "${SECURE_SERVERS[@]}"
		elif valid_server "$n"; then
			printf '%s\n' "$n"
		else
			die "unknown server '$n' (known: ${ALL_SERVERS[*]} all)"
		fi
	done
}

members() { case $1 in etcd-cluster | zookeeper-ensemble) echo 3 ;; kube) echo 2 ;; *) echo 1 ;; esac; }
sdir() { echo "$STATE/$1"; }
# wdir NAME: where the server process itself writes (data, socket, log):
# sdir, but PG_STATE/NAME for PostgreSQL's, whose server may run as the
# postgres user.
wdir() { case $1 in postgres | postgres-secure) echo "$PG_STATE/$1" ;; *) sdir "$1" ;; esac; }
pidfile() { echo "$STATE/$1/m$2.pid"; }
logfile() { echo "$(wdir "$1")/m$2.log"; }

# secure_dir DIR UID [VAR]: creates DIR (mode 0700, owned by UID) unless it
# exists, and refuses (dies) a DIR that is a symbolic link, not a
# directory, owned by another user, or writable by group or others: on a
# shared host another user could have planted a CA, a PID file or a binary
# in it. Read or search rights for group or others (older versions of this
# script made state dirs 0755; nobody else could write in them) are
# removed, with a notice.
secure_dir() {
	local dir=$1 uid=$2 var=${3:-LEADERSHIP_STATE} owner mode
	if [[ ! -e $dir && ! -L $dir ]]; then
		mkdir -p -- "$(dirname -- "$dir")"
		# a mkdir that fails lost a race: the checks below judge the winner
		if mkdir -m 0700 -- "$dir" 2>/dev/null && [[ $uid != "$(id -u)" ]]; then
			chown -- "$uid" "$dir"
		fi
	fi
	[[ ! -L $dir ]] || die "$dir is a symbolic link: refusing it as a state dir (remove it, or set $var to a directory of your own)"
	[[ -d $dir ]] || die "$dir is not a directory (remove it, or set $var to a directory of your own)"
	owner=$(stat -c %u -- "$dir") mode=$(stat -c %a -- "$dir")
	[[ $owner == "$uid" ]] ||
		die "$dir belongs to uid $owner, not $uid: another user may have planted certificates or PID files in it; refusing it (remove it, or set $var to a directory of your own)"
	((!(8#$mode & 8#022))) ||
		die "$dir is writable by group or others (mode $mode): anyone could have planted certificates or PID files in it; refusing it (check and remove it, or set $var to a directory of your own)"
	if ((8#$mode & 8#077)); then
		chmod 0700 -- "$dir"
		log "$dir: removed group and other rights (was mode $mode)"
	fi
}

# check_state: the state dir, and PostgreSQL's when it is another one and
# exists, pass secure_dir (ensure_state creates PostgreSQL's).
check_state() {
	secure_dir "$STATE" "$(id -u)"
	[[ $PG_STATE == "$STATE" || ! -e $PG_STATE && ! -L $PG_STATE ]] || check_pg_state
}

check_pg_state() {
	local uid
	uid=$(id -u postgres 2>/dev/null) || die "no postgres user: run '$0 install postgres'"
	secure_dir "$PG_STATE" "$uid" LEADERSHIP_PG_STATE
	runuser -u postgres -- test -w "$PG_STATE" -a -x "$PG_STATE" ||
		die "the postgres user cannot reach $PG_STATE (can it search every directory above it?): set LEADERSHIP_PG_STATE to a path it can reach"
}

ensure_state() {
	mkdir -p -- "$(sdir "$1")"
	[[ $(wdir "$1") == "$(sdir "$1")" ]] || { check_pg_state && mkdir -p -- "$(wdir "$1")"; }
}

# PID files hold the PID on line 1 and, on line 2, a string the process's
# command line must contain: this guards against a recycled PID.
record_pid() { # NAME INDEX PID MATCH
	printf '%s\n%s\n' "$3" "$4" >"$(pidfile "$1" "$2")"
}

member_pid() { # NAME INDEX -> PID on stdout when that member is running
	local f pid match cmd
	f=$(pidfile "$1" "$2")
	[[ -r $f ]] || return 1
	{ read -r pid || true; read -r match || true; } <"$f"
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
	[[ -n $cmd && $cmd == *"$match"* ]] || return 1 # empty cmdline: zombie
	echo "$pid"
}

exiting() { # PID: true while a process signalled to stop still exists and is no zombie
	# Its command line is gone as soon as its memory is released, before its
	# files (listening sockets, data dir locks) are closed: member_pid then
	# no longer names it, and a server started at once on its ports failed.
	local st
	st=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ -n $st && $st != Z && $st != X ]]
}

running() { # NAME -> true when at least one member runs
	local i
	for ((i = 1; i <= $(members "$1"); i++)); do
		member_pid "$1" "$i" >/dev/null && return 0
	done
	return 1
}

fail_start() { # NAME MESSAGE: print log tails and exit
	local name=$1 i f
	printf '[servers] ERROR: %s: %s\n' "$name" "$2" >&2
	for ((i = 1; i <= $(members "$name"); i++)); do
		f=$(logfile "$name" "$i")
		[[ -f $f ]] || continue
		printf '[servers] ---- last lines of %s ----\n' "$f" >&2
		tail -n 40 "$f" >&2 || true
	done
	exit 1
}

wait_ready() { # NAME CHECK_FUNCTION: poll the real round trip until it passes
	local name=$1 check=$2 deadline i
	deadline=$(( $(date +%s) + START_TIMEOUT ))
	until "$check" >/dev/null 2>&1; do
		for ((i = 1; i <= $(members "$name"); i++)); do
			member_pid "$name" "$i" >/dev/null ||
				fail_start "$name" "member $i exited during start-up"
		done
		(( $(date +%s) < deadline )) ||
			fail_start "$name" "no successful round trip within ${START_TIMEOUT}s"
		sleep 0.1
	done
	for ((i = 1; i <= $(members "$name"); i++)); do # the answer must come from our process
		member_pid "$name" "$i" >/dev/null || fail_start "$name" "member $i exited during start-up"
	done
}

port_free() { # NAME PORT...: fail early when another process already listens
	local name=$1 p
	shift
	for p in "$@"; do
		# shellcheck disable=SC2016 # expanded by the inner bash
		if timeout 1 bash -c ': >"/dev/tcp/127.0.0.1/$1"' _ "$p" 2>/dev/null; then
			die "$name: 127.0.0.1:$p is already in use by a process not started by this script (see 'ss -ltnp')"
		fi
	done
}

as_postgres() { # run a command as the postgres user (initdb refuses root)
	if [[ $EUID -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

http_get() { # PORT PATH -> response body (HTTP/1.0 over bash /dev/tcp; no curl needed)
	# shellcheck disable=SC2016 # expanded by the inner bash
	timeout 3 bash -c '
		exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		printf "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%s\r\n\r\n" "$2" "$1" >&3
		resp=$(cat <&3)
		case $resp in "HTTP/1."?" 200"*) ;; *) exit 1 ;; esac
		printf "%s\n" "${resp#*$'"'"'\r\n\r\n'"'"'}"
	' _ "$1" "$2"
}

zk_4lw() { # PORT WORD -> reply of a ZooKeeper four-letter word
	printf '%s' "$2" | timeout 3 nc -w 2 127.0.0.1 "$1"
}

# ---------------------------------------------------------------- install --

pkgs_for() {
	case $1 in
	etcd) echo etcd-server etcd-client ;;
	zookeeper) echo zookeeper netcat-openbsd openssl ;; # openssl: zookeeper-secure's digests
	redis) echo redis-server ;;
	postgres) echo postgresql-15 openssl ;; # openssl: postgres-secure's extra certificate
	consul) ;;
	kube) echo etcd-server etcd-client curl openssl ;;
	*) die "unknown install target '$1' (all etcd zookeeper redis postgres consul kube)" ;;
	esac
}

install_apt() { # PACKAGE...
	local missing=() p created_policy=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	if ((${#missing[@]} == 0)); then
		log "apt packages already installed: $*"
		return
	fi
	local sudo=()
	[[ $EUID -eq 0 ]] || sudo=(sudo)
	if [[ ! -e /usr/sbin/policy-rc.d ]]; then
		# Keep package scripts from starting system-wide services; removed again below.
		printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee /usr/sbin/policy-rc.d >/dev/null
		"${sudo[@]}" chmod 755 /usr/sbin/policy-rc.d
		created_policy=1
	fi
	log "apt-get install ${missing[*]}"
	"${sudo[@]}" apt-get update -q
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends --no-upgrade "${missing[@]}"
	[[ -z $created_policy ]] || "${sudo[@]}" rm -f /usr/sbin/policy-rc.d
}

consul_ok() { [[ -x $CONSUL_BIN ]] && "$CONSUL_BIN" version >/dev/null 2>&1; }

install_consul() {
	if consul_ok; then
		log "consul v$CONSUL_VERSION cached: $CONSUL_BIN"
		return
	fi
	local go tmp t0
	go=$(command -v go || true)
	[[ -n $go ]] || go=/usr/local/go/bin/go
	[[ -x $go ]] || die "consul: no Go toolchain found (PATH or /usr/local/go/bin/go)"
	# Build from a copy so the repository's tools/consul stays untouched even
	# when -mod=mod has to complete go.mod/go.sum.
	tmp=$(mktemp -d)
	cp "$REPO_DIR/tools/consul/go.mod" "$REPO_DIR/tools/consul/main.go" "$tmp/"
	[[ ! -f $REPO_DIR/tools/consul/go.sum ]] || cp "$REPO_DIR/tools/consul/go.sum" "$tmp/"
	log "building consul v$CONSUL_VERSION (cold: 4-8 min on 2 cores) -> $CONSUL_BIN"
	t0=$(now_ms)
	# consul-awsauth's pseudo-version is missing from sum.golang.org.
	if ! GOWORK=off GONOSUMDB=github.com/hashicorp/consul-awsauth${GONOSUMDB:+,$GONOSUMDB} \
		"$go" -C "$tmp" build -mod=mod -trimpath -ldflags='-s -w' -o "$tmp/consul" .; then
		rm -rf "$tmp"
		die "consul build failed"
	fi
	mkdir -p "$(dirname "$CONSUL_BIN")"
	mv -f "$tmp/consul" "$CONSUL_BIN.tmp.$$"
	mv -f "$CONSUL_BIN.tmp.$$" "$CONSUL_BIN"
	rm -rf "$tmp"
	port_free consul "$CONSUL_HTTP" "$CONSUL_SERVER" "$CONSUL_SERF_LAN"
	consul_ok || die "consul built but '$CONSUL_BIN version' fails"
	log "consul built in $(elapsed "$t0")"
}

kube_ok() { [[ -x $KUBE_BIN ]] && "$KUBE_BIN" --version 2>/dev/null | grep -qx "Kubernetes v$KUBE_VERSION"; }

# install_kube builds kube-apiserver v$KUBE_VERSION from the module proxy
# (tools/kube-apiserver: k8s.io/kubernetes with each staging module
# replaced by its v0.x release), with the version ldflags Kubernetes' own
# build sets, and caches it by version under ~/.cache/leadership (119 MB).
# Measured (docs/backends.md, "Kubernetes"): cold, 59 min with -p 1 on 2
# cores shared with other builds (about 8 min on 2 idle cores); with Go's
# build cache warm, 18 s (the link); cached, 0.4 s.
install_kube() {
	if kube_ok; then
		log "kube-apiserver v$KUBE_VERSION cached: $KUBE_BIN"
		return
	fi
	local go tmp t0 ldflags k minor=${KUBE_VERSION#*.}
	minor=${minor%%.*}
	go=$(command -v go || true)
	[[ -n $go ]] || go=/usr/local/go/bin/go
	[[ -x $go ]] || die "kube: no Go toolchain found (PATH or /usr/local/go/bin/go)"
	tmp=$(mktemp -d)
	cp "$REPO_DIR/tools/kube-apiserver/go.mod" "$tmp/"
	[[ ! -f $REPO_DIR/tools/kube-apiserver/go.sum ]] || cp "$REPO_DIR/tools/kube-apiserver/go.sum" "$tmp/"
	# What hack/lib/version.sh passes: the version is what the server
	# reports (kubectl version, /version) and what its compatibility
	# checks compare.
	ldflags="-s -w"
	for k in "gitVersion=v$KUBE_VERSION" "gitMajor=${KUBE_VERSION%%.*}" "gitMinor=$minor" \
		"gitTreeState=clean" "buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"; do
		ldflags+=" -X 'k8s.io/client-go/pkg/version.$k' -X 'k8s.io/component-base/version.$k'"
	done
	log "building kube-apiserver v$KUBE_VERSION (cold: 8 min on 2 idle cores, up to an hour on a loaded machine) -> $KUBE_BIN"
	t0=$(now_ms)
	if ! GOWORK=off nice -n 10 "$go" -C "$tmp" build -mod=mod -trimpath -ldflags="$ldflags" \
		-o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver; then
		rm -rf "$tmp"
		die "kube-apiserver build failed"
	fi
	mkdir -p "$(dirname "$KUBE_BIN")"
	mv -f "$tmp/kube-apiserver" "$KUBE_BIN.tmp.$$"
	mv -f "$KUBE_BIN.tmp.$$" "$KUBE_BIN"
	rm -rf "$tmp"
	kube_ok || die "kube-apiserver built but '$KUBE_BIN --version' does not say v$KUBE_VERSION"
	log "kube-apiserver built in $(elapsed "$t0")"
}

cmd_install() {
	local targets=("$@") t u p pkgs=() do_consul="" do_kube=""
	((${#targets[@]})) || targets=(all)
	for t in "${targets[@]}"; do
		case $t in all | etcd | zookeeper | redis | postgres | consul | kube) ;;
		*) die "unknown install target '$t' (all etcd zookeeper redis postgres consul kube)" ;;
		esac
	done
	for t in "${targets[@]}"; do
		if [[ $t == all ]]; then
			for u in etcd zookeeper redis postgres; do
				read -ra p <<<"$(pkgs_for "$u")"
				pkgs+=("${p[@]}")
			done
			do_consul=1
			continue
		fi
		[[ $t != consul ]] || do_consul=1
		[[ $t != kube ]] || do_kube=1
		read -ra p <<<"$(pkgs_for "$t")"
		((${#p[@]} == 0)) || pkgs+=("${p[@]}")
	done
	((${#pkgs[@]} == 0)) || install_apt "${pkgs[@]}"
	[[ -z $do_consul ]] || install_consul
	[[ -z $do_kube ]] || install_kube
}

# ------------------------------------------------------------------- etcd --

etcd_launch() { # NAME INDEX MEMBER_NAME CLIENT_PORT PEER_PORT INITIAL_CLUSTER
	local name=$1 i=$2 data
	data="$(sdir "$name")/m$i.data"
	port_free "$name" "$4" "$5"
	etcd --name "$3" --data-dir "$data" \
		--listen-client-urls "http://127.0.0.1:$4" --advertise-client-urls "http://127.0.0.1:$4" \
		--listen-peer-urls "http://127.0.0.1:$5" --initial-advertise-peer-urls "http://127.0.0.1:$5" \
		--initial-cluster "$6" --initial-cluster-token "leadership-$name" \
		--initial-cluster-state new \
		--heartbeat-interval 10 --election-timeout 100 \
		--logger zap --log-outputs stderr \
		</dev/null >>"$(logfile "$name" "$i")" 2>&1 &
	record_pid "$name" "$i" $! "$data"
}

etcd_roundtrip() { # ENDPOINT... : put through all, linearizable get from each
	local all ep v
	all=$(IFS=,; echo "$*")
	timeout 5 etcdctl --endpoints="$all" --dial-timeout=1s --command-timeout=2s \
		put leadership-check ok >/dev/null || return 1
	for ep in "$@"; do
		v=$(timeout 5 etcdctl --endpoints="$ep" --dial-timeout=1s --command-timeout=2s \
			get leadership-check --print-value-only) || return 1
		[[ $v == ok ]] || return 1
	done
}

etcd_cluster_eps() {
	local p
	for p in "${ETCD_CLUSTER_CLIENT[@]}"; do echo "127.0.0.1:$p"; done
}

check_etcd() { etcd_roundtrip "127.0.0.1:$ETCD_CLIENT"; }
check_etcd_cluster() { # every running member must answer
	local eps=() i
	for ((i = 1; i <= 3; i++)); do
		member_pid etcd-cluster "$i" >/dev/null && eps+=("127.0.0.1:${ETCD_CLUSTER_CLIENT[i - 1]}")
	done
	((${#eps[@]})) && etcd_roundtrip "${eps[@]}"
}

start_etcd() {
	member_pid etcd 1 >/dev/null ||
		etcd_launch etcd 1 leadership-etcd "$ETCD_CLIENT" "$ETCD_PEER" \
			"leadership-etcd=http://127.0.0.1:$ETCD_PEER"
}

start_etcd_cluster() {
	local i initial=""
	for ((i = 1; i <= 3; i++)); do
		initial+="${initial:+,}e$i=http://127.0.0.1:${ETCD_CLUSTER_PEER[i - 1]}"
	done
	for ((i = 1; i <= 3; i++)); do
		member_pid etcd-cluster "$i" >/dev/null ||
			etcd_launch etcd-cluster "$i" "e$i" "${ETCD_CLUSTER_CLIENT[i - 1]}" \
				"${ETCD_CLUSTER_PEER[i - 1]}" "$initial"
	done
}

etcd_member_is_leader() { # CLIENT_PORT -> true when that member leads raft
	local line
	# simple format: endpoint, id, version, db size, is leader, is learner, ...
	line=$(timeout 3 etcdctl --endpoints="127.0.0.1:$1" --dial-timeout=1s --command-timeout=1s \
		endpoint status 2>/dev/null) || return 1
	[[ $(awk -F', ' '{print $5}' <<<"$line") == true ]]
}

# -------------------------------------------------------------- zookeeper --

zk_write_cfg() { # NAME INDEX CLIENT_PORT [ensemble]
	local name=$1 i=$2 dir data
	dir=$(sdir "$name")
	data="$dir/m$i.data"
	mkdir -p "$data"
	{
		echo "tickTime=200"
		echo "initLimit=50"
		echo "syncLimit=25"
		echo "dataDir=$data"
		echo "clientPort=$3"
		echo "clientPortAddress=127.0.0.1"
		echo "admin.enableServer=false"
		echo "4lw.commands.whitelist=ruok,srvr,stat,mntr"
		echo "minSessionTimeout=400"
		echo "maxSessionTimeout=60000"
		echo "maxClientCnxns=0"
		if [[ ${4:-} == ensemble ]]; then
			echo "standaloneEnabled=false"
			echo "reconfigEnabled=false"
			local j
			for ((j = 1; j <= 3; j++)); do
				echo "server.$j=127.0.0.1:${ZK_ENS_QUORUM[j - 1]}:${ZK_ENS_ELECTION[j - 1]}"
			done
			echo "$i" >"$data/myid"
		fi
	} >"$dir/m$i.cfg"
}

zk_launch() { # NAME INDEX MAIN_CLASS CLIENT_PORT
	local name=$1 i=$2 cfg
	cfg="$(sdir "$name")/m$i.cfg"
	port_free "$name" "$4"
	java -Xms32m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
		-Dorg.slf4j.simpleLogger.showDateTime=true \
		-Dzookeeper.jmx.log4j.disable=true \
		-cp "$ZK_CP" "$3" "$cfg" \
		</dev/null >>"$(logfile "$name" "$i")" 2>&1 &
	record_pid "$name" "$i" $! "$cfg"
}

zk_serving() { # PORT -> true when ruok=imok and srvr reports a mode
	[[ $(zk_4lw "$1" ruok) == imok ]] && zk_4lw "$1" srvr | grep -qE '^Mode: (standalone|leader|follower)'
}

# A real client session: create, read and delete a znode with ZooKeeper's own
# CLI (one JVM, commands on stdin). The CLI does not wait for its connection,
# so a dead first pick fails the attempt; wait_ready simply tries again.
zk_client_roundtrip() { # CONNECT_STRING
	local node out
	node="/leadership-check-$$-$RANDOM"
	out=$(printf 'create %s ok\nget %s\ndelete %s\nquit\n' "$node" "$node" "$node" |
		timeout 15 java -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
			-Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
			-cp "$ZK_CP" org.apache.zookeeper.ZooKeeperMain -server "$1" 2>&1) || true
	if grep -q "^Created $node" <<<"$out" && grep -qx 'ok' <<<"$out"; then
		return 0
	fi
	return 1
}

check_zookeeper() { zk_serving "$ZK_CLIENT" && zk_client_roundtrip "127.0.0.1:$ZK_CLIENT"; }
check_zookeeper_ensemble() { # every running node serves, then a client session works
	local i
	for ((i = 1; i <= 3; i++)); do
		member_pid zookeeper-ensemble "$i" >/dev/null || continue
		zk_serving "${ZK_ENS_CLIENT[i - 1]}" || return 1
	done
	zk_client_roundtrip "$(zk_ensemble_connect)"
}

start_zookeeper() {
	if ! member_pid zookeeper 1 >/dev/null; then
		zk_write_cfg zookeeper 1 "$ZK_CLIENT"
		zk_launch zookeeper 1 org.apache.zookeeper.server.ZooKeeperServerMain "$ZK_CLIENT"
	fi
}

start_zookeeper_ensemble() {
	local i
	for ((i = 1; i <= 3; i++)); do
		if ! member_pid zookeeper-ensemble "$i" >/dev/null; then
			zk_write_cfg zookeeper-ensemble "$i" "${ZK_ENS_CLIENT[i - 1]}" ensemble
			zk_launch zookeeper-ensemble "$i" org.apache.zookeeper.server.quorum.QuorumPeerMain "${ZK_ENS_CLIENT[i - 1]}"
		fi
	done
}

zk_ensemble_connect() {
	local p s=""
	for p in "${ZK_ENS_CLIENT[@]}"; do s+="${s:+,}127.0.0.1:$p"; done
	echo "$s"
}

zk_member_is_leader() { # CLIENT_PORT -> true when that node leads the ensemble
	zk_4lw "$1" srvr 2>/dev/null | grep -qx 'Mode: leader'
}

# -------------------------------------------------------- cluster leaders --

leader_index() { # etcd-cluster|zookeeper-ensemble -> INDEX of the member that leads
	local name=$1 is_leader ports i deadline
	case $name in
	etcd-cluster) is_leader=etcd_member_is_leader ports=("${ETCD_CLUSTER_CLIENT[@]}") ;;
	zookeeper-ensemble) is_leader=zk_member_is_leader ports=("${ZK_ENS_CLIENT[@]}") ;;
	*) return 1 ;;
	esac
	deadline=$(( $(date +%s) + LEADER_TIMEOUT ))
	while :; do
		for ((i = 1; i <= ${#ports[@]}; i++)); do
			member_pid "$name" "$i" >/dev/null || continue
			if "$is_leader" "${ports[i - 1]}"; then
				echo "$i"
				return 0
			fi
		done
		(( $(date +%s) < deadline )) || return 1
		sleep 0.1
	done
}

# ------------------------------------------------------------------ redis --

start_redis() {
	member_pid redis 1 >/dev/null && return 0
	port_free redis "$REDIS_PORT"
	redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
		--notify-keyspace-events KEA --dir "$(sdir redis)" --daemonize no --logfile '' \
		</dev/null >>"$(logfile redis 1)" 2>&1 &
	# redis rewrites its title to "redis-server 127.0.0.1:PORT" a moment
	# after it starts: match what both forms of its command line contain.
	record_pid redis 1 $! "$REDIS_PORT"
}

check_redis() {
	local r=(timeout 3 redis-cli -h 127.0.0.1 -p "$REDIS_PORT")
	[[ $("${r[@]}" ping) == PONG ]] &&
		[[ $("${r[@]}" set leadership-check ok) == OK ]] &&
		[[ $("${r[@]}" get leadership-check) == ok ]]
}

# --------------------------------------------------------------- postgres --

pg_sql() { # DATABASE SQL
	PGCONNECT_TIMEOUT=3 timeout 10 psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -d "$1" -tAXqc "$2"
}

start_postgres() {
	local dir data pid
	member_pid postgres 1 >/dev/null && return 0
	port_free postgres "$PG_PORT"
	dir=$(wdir postgres)
	data="$dir/data"
	if [[ ! -f $data/PG_VERSION ]]; then
		rm -rf "$data"
		mkdir -p "$data" "$dir/run"
		chmod 700 "$data"
	fi
	touch "$(logfile postgres 1)"
	[[ $EUID -ne 0 ]] || chown postgres:postgres "$data" "$dir/run" "$(logfile postgres 1)"
	if [[ ! -f $data/PG_VERSION ]]; then
		as_postgres "$PG_BIN/initdb" -D "$data" -U postgres -A trust --no-sync \
			-E UTF8 --locale=C --no-instructions >>"$(logfile postgres 1)" 2>&1 ||
			fail_start postgres "initdb failed"
	fi
	# pg_ctl daemonizes the postmaster and waits (-w) until it accepts
	# connections; the postmaster PID is then read from postmaster.pid.
	as_postgres "$PG_BIN/pg_ctl" start -w -t "$START_TIMEOUT" -D "$data" \
		-l "$(logfile postgres 1)" \
		-o "-c port=$PG_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir/run -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
		</dev/null >/dev/null 2>&1 || fail_start postgres "pg_ctl start failed"
	pid=$(head -n 1 "$data/postmaster.pid")
	record_pid postgres 1 "$pid" "$data"
	# create the test database once; a loaded machine may refuse the first
	# tries (a server still starting, clients reconnecting after a wipe)
	local try
	for try in 1 2 3 4 5 6 7 8 9 10; do
		[[ $(pg_sql postgres "select 1 from pg_database where datname = '$PG_DB'") == 1 ]] && return 0
		pg_sql postgres "create database $PG_DB" >/dev/null 2>>"$(logfile postgres 1)" && return 0
		sleep 1
	done
	fail_start postgres "create database $PG_DB failed"
}

check_postgres() {
	[[ $(pg_sql "$PG_DB" 'select 1') == 1 ]]
}

# ----------------------------------------------------------------- consul --

start_consul() {
	local dir cfg
	member_pid consul 1 >/dev/null && return 0
	consul_ok || die "consul binary missing or broken at $CONSUL_BIN: run '$0 install consul'"
	dir=$(sdir consul)
	cfg="$dir/agent.hcl"
	cat >"$cfg" <<-'EOF'
		# Test agent: the stock minimum session TTL is 10s; tests use short TTLs.
		session_ttl_min = "1s"
		disable_update_check = true
		ports {
		  grpc_tls = -1
		}
		# Keep cumulative counters for /v1/agent/metrics?format=prometheus
		# (bench --scale reads the agent's HTTP request counts there).
		telemetry {
		  prometheus_retention_time = "24h"
		  disable_hostname = true
		}
	EOF
	"$CONSUL_BIN" agent -dev -node leadership-test -bind 127.0.0.1 -client 127.0.0.1 \
		-http-port "$CONSUL_HTTP" -server-port "$CONSUL_SERVER" \
		-serf-lan-port "$CONSUL_SERF_LAN" -serf-wan-port "$CONSUL_SERF_WAN" \
		-dns-port -1 -grpc-port -1 -config-file "$cfg" \
		</dev/null >>"$(logfile consul 1)" 2>&1 &
	record_pid consul 1 $! "$cfg"
}

check_consul() {
	local leader v
	leader=$(http_get "$CONSUL_HTTP" /v1/status/leader) || return 1
	[[ $leader == \"?*\" ]] || return 1
	CONSUL_HTTP_ADDR="127.0.0.1:$CONSUL_HTTP" timeout 5 "$CONSUL_BIN" kv put leadership-check ok >/dev/null || return 1
	v=$(CONSUL_HTTP_ADDR="127.0.0.1:$CONSUL_HTTP" timeout 5 "$CONSUL_BIN" kv get leadership-check) || return 1
	[[ $v == ok ]]
}

# ------------------------------------------------------------------- kube --
#
# kube: kube-apiserver v$KUBE_VERSION on 127.0.0.1:$KUBE_PORT (HTTPS, a
# self-signed serving certificate made here), member 2, on an etcd member
# of its own (member 1, client $KUBE_ETCD_CLIENT, peer $KUBE_ETCD_PEER;
# Debian's etcd 3.4 works, with a warning in the API server's log), under
# the etcd prefix /leadership-kube. Static token authentication (one token
# per identity, drawn at random per state dir), RBAC authorization, no
# anonymous requests, no endpoint reconciler (no controller manager runs:
# leases need none). In namespace $KUBE_NAMESPACE:
#
#   admin      group system:masters: everything
#   candidate  role leadership-candidate: get, list, watch, create, update
#              on leases (coordination.k8s.io)
#   follower   role leadership-follower: get, list, watch on leases
#   norights   authenticated, no role
#
# Each identity has a kubeconfig (kubeconfig-NAME in the state dir, mode
# 0600, context leadership-NAME with namespace $KUBE_NAMESPACE); env
# exports their paths. The namespace, roles and bindings are created after
# every start (the data may have been wiped).

kube_dir() { sdir kube; }

# kube_files writes, once per state dir, the serving certificate, the
# service account signing key, the token file and the kubeconfigs.
kube_files() {
	local dir id tok
	dir=$(kube_dir)
	if [[ ! -f $dir/serving.crt || ! -f $dir/serving.key ]]; then
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
			-subj /CN=leadership-kube-apiserver \
			-addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
			-keyout "$dir/serving.key" -out "$dir/serving.crt" >/dev/null 2>&1 ||
			die "kube: openssl could not make the serving certificate"
	fi
	if [[ ! -f $dir/sa.key || ! -f $dir/sa.pub ]]; then
		openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/sa.key" 2>/dev/null &&
			openssl pkey -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null ||
			die "kube: openssl could not make the service account key"
	fi
	chmod 0600 "$dir/serving.key" "$dir/sa.key"
	if [[ ! -f $dir/tokens.csv ]]; then
		(
			umask 077
			for id in "${KUBE_IDENTITIES[@]}"; do
				tok=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
				if [[ $id == admin ]]; then
					printf '%s,leadership-%s,leadership-%s,"system:masters"\n' "$tok" "$id" "$id"
				else
					printf '%s,leadership-%s,leadership-%s\n' "$tok" "$id" "$id"
				fi
			done >"$dir/tokens.csv.tmp"
			mv -f "$dir/tokens.csv.tmp" "$dir/tokens.csv"
		)
	fi
	for id in "${KUBE_IDENTITIES[@]}"; do
		tok=$(kube_token "$id")
		(
			umask 077
			cat >"$dir/kubeconfig-$id.tmp" <<-KC
				apiVersion: v1
				kind: Config
				clusters:
				- name: leadership
				  cluster:
				    server: https://127.0.0.1:$KUBE_PORT
				    certificate-authority: $dir/serving.crt
				users:
				- name: leadership-$id
				  user:
				    token: $tok
				contexts:
				- name: leadership-$id
				  context:
				    cluster: leadership
				    user: leadership-$id
				    namespace: $KUBE_NAMESPACE
				current-context: leadership-$id
			KC
			mv -f "$dir/kubeconfig-$id.tmp" "$dir/kubeconfig-$id"
		)
	done
}

kube_token() { # IDENTITY -> its bearer token
	awk -F, -v u="leadership-$1" '$2 == u { print $1 }' "$(kube_dir)/tokens.csv"
}

# kube_curl IDENTITY METHOD PATH [BODY]: one request to the API server;
# prints the HTTP status code.
kube_curl() {
	local args=(-sS -o /dev/null -w '%{http_code}' --max-time 5
		--cacert "$(kube_dir)/serving.crt" -H "Authorization: Bearer $(kube_token "$1")"
		-X "$2")
	[[ -z ${4:-} ]] || args+=(-H 'Content-Type: application/json' --data-binary "$4")
	curl "${args[@]}" "https://127.0.0.1:$KUBE_PORT$3"
}

start_kube() {
	local dir data deadline
	dir=$(kube_dir)
	kube_ok || die "kube-apiserver v$KUBE_VERSION missing or broken at $KUBE_BIN: run '$0 install kube'"
	kube_files
	data="$dir/m1.data"
	if ! member_pid kube 1 >/dev/null; then
		port_free kube "$KUBE_ETCD_CLIENT" "$KUBE_ETCD_PEER"
		etcd --name leadership-kube-etcd --data-dir "$data" \
			--listen-client-urls "http://127.0.0.1:$KUBE_ETCD_CLIENT" --advertise-client-urls "http://127.0.0.1:$KUBE_ETCD_CLIENT" \
			--listen-peer-urls "http://127.0.0.1:$KUBE_ETCD_PEER" --initial-advertise-peer-urls "http://127.0.0.1:$KUBE_ETCD_PEER" \
			--initial-cluster "leadership-kube-etcd=http://127.0.0.1:$KUBE_ETCD_PEER" \
			--initial-cluster-token leadership-kube --initial-cluster-state new \
			--heartbeat-interval 10 --election-timeout 100 \
			--logger zap --log-outputs stderr \
			</dev/null >>"$(logfile kube 1)" 2>&1 &
		record_pid kube 1 $! "$data"
	fi
	# The API server gives up at once on an etcd that does not answer.
	deadline=$(( $(date +%s) + START_TIMEOUT ))
	until etcd_roundtrip "127.0.0.1:$KUBE_ETCD_CLIENT" >/dev/null 2>&1; do
		member_pid kube 1 >/dev/null || fail_start kube "its etcd exited during start-up"
		(( $(date +%s) < deadline )) || fail_start kube "its etcd gave no round trip within ${START_TIMEOUT}s"
		sleep 0.1
	done
	if ! member_pid kube 2 >/dev/null; then
		port_free kube "$KUBE_PORT"
		mkdir -p "$dir/cert-dir"
		"$KUBE_BIN" \
			--bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$KUBE_PORT" \
			--etcd-servers="http://127.0.0.1:$KUBE_ETCD_CLIENT" --etcd-prefix=/leadership-kube \
			--endpoint-reconciler-type=none \
			--tls-cert-file="$dir/serving.crt" --tls-private-key-file="$dir/serving.key" \
			--cert-dir="$dir/cert-dir" \
			--token-auth-file="$dir/tokens.csv" --anonymous-auth=false \
			--authorization-mode=RBAC \
			--service-account-issuer=https://kubernetes.default.svc \
			--service-account-key-file="$dir/sa.pub" \
			--service-account-signing-key-file="$dir/sa.key" \
			--service-cluster-ip-range=10.96.0.0/16 \
			--profiling=false --enable-garbage-collector=false \
			</dev/null >>"$(logfile kube 2)" 2>&1 &
		record_pid kube 2 $! "$dir/tokens.csv"
	fi
}

# check_kube: /readyz answers ok to the admin's token (a real TLS and
# authentication round trip), then the namespace, roles and bindings are
# created (409 Conflict: already there).
check_kube() {
	local code
	code=$(kube_curl admin GET /readyz) || return 1
	[[ $code == 200 ]] || return 1
	kube_apply /api/v1/namespaces \
		"{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$KUBE_NAMESPACE\"}}" || return 1
	kube_role candidate '"get","list","watch","create","update"' || return 1
	kube_role follower '"get","list","watch"' || return 1
	# the candidate's token may now list leases in the namespace
	[[ $(kube_curl candidate GET "/apis/coordination.k8s.io/v1/namespaces/$KUBE_NAMESPACE/leases") == 200 ]]
}

kube_apply() { # PATH JSON: create, 201 or 409 Conflict
	local code
	code=$(kube_curl admin POST "$1" "$2") || return 1
	[[ $code == 201 || $code == 409 ]]
}

kube_role() { # IDENTITY VERBS
	local base="/apis/rbac.authorization.k8s.io/v1/namespaces/$KUBE_NAMESPACE"
	kube_apply "$base/roles" "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"Role\",
		\"metadata\":{\"name\":\"leadership-$1\",\"namespace\":\"$KUBE_NAMESPACE\"},
		\"rules\":[{\"apiGroups\":[\"coordination.k8s.io\"],\"resources\":[\"leases\"],\"verbs\":[$2]}]}" &&
		kube_apply "$base/rolebindings" "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",
		\"metadata\":{\"name\":\"leadership-$1\",\"namespace\":\"$KUBE_NAMESPACE\"},
		\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"leadership-$1\"},
		\"subjects\":[{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"User\",\"name\":\"leadership-$1\"}]}"
}

env_kube() {
	local dir id
	dir=$(kube_dir)
	echo "export LEADERSHIP_KUBE_SERVER=https://127.0.0.1:$KUBE_PORT"
	echo "export LEADERSHIP_KUBE_NAMESPACE=$KUBE_NAMESPACE"
	echo "export LEADERSHIP_KUBE_CA=$dir/serving.crt"
	for id in "${KUBE_IDENTITIES[@]}"; do
		echo "export LEADERSHIP_KUBECONFIG_${id^^}=$dir/kubeconfig-$id"
	done
}

# --------------------------------------------------------------- commands --

fn_name() { echo "${1//-/_}"; }

cmd_start() {
	(($#)) || die "usage: $0 start NAME... (${ALL_SERVERS[*]} all)"
	local names name t0 i pids
	names=$(expand_names "$@")
	for name in $names; do
		t0=$(now_ms)
		ensure_state "$name"
		"start_$(fn_name "$name")"
		wait_ready "$name" "check_$(fn_name "$name")"
		pids=""
		for ((i = 1; i <= $(members "$name"); i++)); do
			pids+="${pids:+ }$(member_pid "$name" "$i" || echo -)"
		done
		log "$name ready in $(elapsed "$t0") (pid $pids)"
	done
}

stop_member() { # NAME INDEX: TERM one member, wait, KILL after the grace period
	local pid deadline
	pid=$(member_pid "$1" "$2") || return 0
	kill -s TERM "$pid" 2>/dev/null || true
	deadline=$(( $(date +%s) + STOP_GRACE ))
	while member_pid "$1" "$2" >/dev/null || exiting "$pid"; do
		if (( $(date +%s) >= deadline )); then
			log "$1 member $2 (pid $pid) still running after ${STOP_GRACE}s: SIGKILL"
			kill -s KILL "$pid" 2>/dev/null || true
		fi
		sleep 0.05
	done
	rm -f "$(pidfile "$1" "$2")"
}

stop_names() { # NAME...: TERM every member, wait, KILL after the grace period
	local name i pid sig targets=() deadline
	for name in "$@"; do
		# An etcd leader stopping on SIGTERM first hands leadership to a peer;
		# if every peer is stopping too that stalls ~5 s. Stopping the members
		# one at a time keeps each hand-over (or the lone last member) instant.
		if [[ $name == etcd-cluster ]]; then
			stop_member etcd-cluster 1
			stop_member etcd-cluster 2
		fi
		# kube-apiserver (member 2) first: stopped after its etcd, it
		# retries etcd until SIGKILL, STOP_GRACE later.
		[[ $name != kube ]] || stop_member kube 2
	done
	for name in "$@"; do
		sig=TERM
		[[ $name != postgres && $name != postgres-secure ]] || sig=INT # postgres: fast shutdown
		for ((i = 1; i <= $(members "$name"); i++)); do
			if pid=$(member_pid "$name" "$i"); then
				kill -s "$sig" "$pid" 2>/dev/null || true
				targets+=("$name:$i:$pid")
			else
				rm -f "$(pidfile "$name" "$i")"
			fi
		done
	done
	deadline=$(( $(date +%s) + STOP_GRACE ))
	local t left
	while :; do
		left=()
		for t in "${targets[@]}"; do
			IFS=: read -r name i pid <<<"$t"
			if member_pid "$name" "$i" >/dev/null || exiting "$pid"; then left+=("$t"); fi
		done
		((${#left[@]})) || break
		if (( $(date +%s) >= deadline )); then
			for t in "${left[@]}"; do
				IFS=: read -r name i pid <<<"$t"
				log "$name member $i (pid $pid) still running after ${STOP_GRACE}s: SIGKILL"
				kill -s KILL "$pid" 2>/dev/null || true
			done
			deadline=$(( $(date +%s) + 5 )) # SIGKILL again if needed
		fi
		targets=("${left[@]}")
		sleep 0.1
	done
	for name in "$@"; do
		for ((i = 1; i <= $(members "$name"); i++)); do rm -f "$(pidfile "$name" "$i")"; done
		log "$name stopped"
	done
}

# wipe_names NAME...: delete the on-disk data of stopped servers, so that
# the next start begins empty, as a server whose disk was lost: etcd's and
# ZooKeeper's data dirs, PostgreSQL's cluster (start runs initdb and creates
# the database again). Redis and Consul keep no data here: nothing to do.
wipe_names() {
	local name i
	for name in "$@"; do
		for ((i = 1; i <= $(members "$name"); i++)); do
			! member_pid "$name" "$i" >/dev/null || die "$name member $i is running: stop it before wiping"
		done
		case $name in
		etcd | etcd-cluster | zookeeper | zookeeper-ensemble)
			for ((i = 1; i <= $(members "$name"); i++)); do
				rm -rf -- "$(sdir "$name")/m$i.data"
			done
			;;
		postgres) rm -rf -- "$(wdir postgres)/data" ;;
		kube) rm -rf -- "$(sdir kube)/m1.data" ;; # its etcd's; certificates and tokens stay
		redis | consul) ;;
		*) # secured servers: everything in their state dirs but the logs
			find "$(sdir "$name")" "$(wdir "$name")" -mindepth 1 -maxdepth 1 ! -name '*.log' -exec rm -rf -- {} + 2>/dev/null || true ;;
		esac
		log "$name data wiped"
	done
}

# parse_wipe ARGS...: sets WIPE=1 and NAMES to the other arguments.
parse_wipe() {
	WIPE=""
	NAMES=()
	local a
	for a in "$@"; do
		if [[ $a == --wipe ]]; then WIPE=1; else NAMES+=("$a"); fi
	done
}

cmd_stop() {
	local names
	parse_wipe "$@"
	EXPAND_OPTIONAL=1
	if ((${#NAMES[@]})); then names=$(expand_names "${NAMES[@]}"); else names=$(expand_names all); fi
	# shellcheck disable=SC2086
	stop_names $names
	# shellcheck disable=SC2086
	[[ -z $WIPE ]] || wipe_names $names
}

cmd_restart() {
	parse_wipe "$@"
	((${#NAMES[@]})) || die "usage: $0 restart [--wipe] NAME..."
	local names
	names=$(expand_names "${NAMES[@]}")
	# shellcheck disable=SC2086
	stop_names $names
	# shellcheck disable=SC2086
	[[ -z $WIPE ]] || wipe_names $names
	# shellcheck disable=SC2086
	cmd_start $names
}

cmd_kill() { # NAME [INDEX|leader]
	(($# >= 1)) || die "usage: $0 kill NAME [INDEX|leader]"
	local name=$1 idx=${2:-1} pid n
	valid_server "$name" || die "unknown server '$name'"
	n=$(members "$name")
	if [[ $idx == leader ]]; then
		case $name in
		etcd-cluster | zookeeper-ensemble) idx=$(leader_index "$name") || die "no $name leader found" ;;
		*) idx=1 ;;
		esac
	fi
	if ! [[ $idx =~ ^[0-9]+$ ]] || ((idx < 1 || idx > n)); then
		die "$name: member index must be 1..$n or leader"
	fi
	pid=$(member_pid "$name" "$idx") || die "$name member $idx is not running"
	kill -s KILL "$pid"
	while member_pid "$name" "$idx" >/dev/null; do sleep 0.05; done
	log "$name member $idx (pid $pid) killed with SIGKILL"
	echo "$idx $pid"
}

cmd_env() {
	running etcd && echo "export LEADERSHIP_ETCD=127.0.0.1:$ETCD_CLIENT"
	running etcd-cluster && echo "export LEADERSHIP_ETCD_CLUSTER=$(etcd_cluster_eps | paste -sd,)"
	running zookeeper && echo "export LEADERSHIP_ZK=127.0.0.1:$ZK_CLIENT"
	running zookeeper-ensemble && echo "export LEADERSHIP_ZK_ENSEMBLE=$(zk_ensemble_connect)"
	running redis && echo "export LEADERSHIP_REDIS=127.0.0.1:$REDIS_PORT"
	running postgres && echo "export LEADERSHIP_POSTGRES='postgres://postgres@127.0.0.1:$PG_PORT/$PG_DB?sslmode=disable&connect_timeout=20'"
	running consul && echo "export LEADERSHIP_CONSUL=127.0.0.1:$CONSUL_HTTP"
	running kube && env_kube
	local name
	for name in "${SECURE_SERVERS[@]}"; do
		running "$name" && "env_$(fn_name "$name")"
	done
	((${#SECURE_SERVERS[@]} == 0)) || echo "export LEADERSHIP_CERTS=$CERTS_DIR"
	return 0
}

cmd_status() {
	local name i pid
	for name in "${ALL_SERVERS[@]}" "${SECURE_SERVERS[@]}" "${OPTIONAL_SERVERS[@]}"; do
		for ((i = 1; i <= $(members "$name"); i++)); do
			if pid=$(member_pid "$name" "$i"); then
				printf '%-20s member %d  running  pid %s\n' "$name" "$i" "$pid"
			elif [[ -f $(pidfile "$name" "$i") ]]; then
				printf '%-20s member %d  DEAD     (stale pid file)\n' "$name" "$i"
			fi
		done
	done
}

cmd_leader() { # etcd-cluster|zookeeper-ensemble -> "INDEX PID"
	local idx none="no etcd-cluster member reports leadership"
	[[ $1 == etcd-cluster ]] || none="no zookeeper-ensemble node reports Mode: leader"
	idx=$(leader_index "$1") || die "$none"
	echo "$idx $(member_pid "$1" "$idx")"
}

cmd_clean() {
	cmd_stop
	[[ -n $STATE && $STATE != / && -n $PG_STATE && $PG_STATE != / ]] || die "refusing to remove STATE='$STATE' PG_STATE='$PG_STATE'"
	rm -rf -- "$STATE"
	log "removed $STATE"
	if [[ $PG_STATE != "$STATE" && -e $PG_STATE ]]; then
		rm -rf -- "$PG_STATE"
		log "removed $PG_STATE"
	fi
}

usage() {
	sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
	exit "${1:-2}"
}

main() {
	(($#)) || usage
	local cmd=$1
	shift
	case $cmd in
	install | -h | --help | help) ;;
	*) check_state ;;
	esac
	case $cmd in
	install) cmd_install "$@" ;;
	start) cmd_start "$@" ;;
	stop) cmd_stop "$@" ;;
	restart) cmd_restart "$@" ;;
	kill) cmd_kill "$@" ;;
	env) cmd_env ;;
	status) cmd_status ;;
	etcd-leader) cmd_leader etcd-cluster ;;
	zk-leader) cmd_leader zookeeper-ensemble ;;
	clean) cmd_clean ;;
	-h | --help | help) usage 0 ;;
	*) die "unknown command '$cmd' (install start stop restart kill env status etcd-leader zk-leader clean)" ;;
	esac
}

for secure_file in "$SCRIPT_DIR"/secure/*.sh; do
	[[ -e $secure_file ]] || continue
	# shellcheck source=/dev/null
	source "$secure_file"
done

main "$@"
