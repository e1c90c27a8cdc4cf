# shellcheck shell=bash
# scripts/secure/etcd.sh: the secured etcd test server (sourced by
# scripts/servers.sh; see scripts/README.md and docs/backends.md).
#
# etcd-secure: one etcd member on 127.0.0.1, client port 24379 (TLS with
# server.crt, client certificates signed by ca.crt required) and peer port
# 24380 (plain text, loopback only, the member's own), with etcd's auth
# enabled. Its users, set up once per data directory by the block between
# "docs:begin" and "docs:end" (the one docs/backends.md shows):
#
#   leadership         candidate: read and write on leadershiptest/ and
#                      secure/ only; no password, its client certificate's
#                      CN "leadership" is the user
#   leadership-reader  follower: read only on the same prefixes; no
#                      password, its certificate's CN is the user
#   leadership-other   a password, no role: no rights on those prefixes
#                      (its URL carries client.crt, whose CN has rights:
#                      the password, taking precedence, is what counts)
#   root               the administrator etcd requires before auth enable
#
# The passwords (root's and leadership-other's) are drawn at random when
# the data directory is created and kept, with the URLs, in files only
# their owner may read: m1.secrets and m1.urls beside the data directory
# (never committed, never printed but by env).

SECURE_SERVERS+=(etcd-secure)

ETCD_SECURE_CLIENT=24379
ETCD_SECURE_PEER=24380

# etcd_secure_ctl runs etcdctl against etcd-secure with the candidate's
# client certificate and no password: before auth is enabled any trusted
# certificate may do anything, afterwards its CN is the user "leadership".
etcd_secure_ctl() {
	timeout 10 etcdctl --endpoints="https://127.0.0.1:$ETCD_SECURE_CLIENT" \
		--cacert="$CERTS_DIR/ca.crt" --cert="$CERTS_DIR/client.crt" --key="$CERTS_DIR/client.key" \
		--dial-timeout=2s --command-timeout=3s "$@"
}

# etcd_secure_password prints a fresh random password (letters and digits,
# so that it needs no escaping in a URL).
etcd_secure_password() {
	local p
	p=$(head -c 32 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
	echo "${p:0:24}"
}

# etcd_secure_setup creates the roles and users and enables auth, then
# saves the URLs; it runs in a subshell (set -e: the first failing command
# ends it), as the first client of a new data directory.
etcd_secure_setup() (
	set -e
	dir=$(sdir etcd-secure)
	# shellcheck source=/dev/null
	source "$dir/m1.secrets" # ROOT_PASSWORD OTHER_PASSWORD
	CERTS=$CERTS_DIR
	# docs:begin
	# As the first client of the new server, while its auth is still off
	# (any certificate ca.crt signed may do anything until auth enable):
	export ETCDCTL_API=3 ETCDCTL_ENDPOINTS=https://127.0.0.1:24379 ETCDCTL_CACERT="$CERTS/ca.crt" \
		ETCDCTL_CERT="$CERTS/client.crt" ETCDCTL_KEY="$CERTS/client.key"
	etcdctl role add leadership-candidate
	etcdctl role grant-permission --prefix=true leadership-candidate readwrite leadershiptest/
	etcdctl role grant-permission --prefix=true leadership-candidate readwrite secure/
	etcdctl role add leadership-follower
	etcdctl role grant-permission --prefix=true leadership-follower read leadershiptest/
	etcdctl role grant-permission --prefix=true leadership-follower read secure/
	etcdctl user add leadership --no-password
	etcdctl user grant-role leadership leadership-candidate
	etcdctl user add leadership-reader --no-password
	etcdctl user grant-role leadership-reader leadership-follower
	etcdctl user add root --new-user-password="$ROOT_PASSWORD"
	etcdctl user grant-role root root
	etcdctl auth enable
	# A candidate: its certificate's CN "leadership" is the user.
	candidate_url="etcd://127.0.0.1:24379?ca=$CERTS/ca.crt&cert=$CERTS/client.crt&key=$CERTS/client.key"
	# A follower: read only; its certificate's CN "leadership-reader" is the user.
	follower_url="etcd://127.0.0.1:24379?ca=$CERTS/ca.crt&cert=$CERTS/reader.crt&key=$CERTS/reader.key"
	# docs:end
	# The tests' intruder: a user of the same server without any role.
	etcdctl --user root --password="$ROOT_PASSWORD" user add leadership-other --new-user-password="$OTHER_PASSWORD"
	other_url="etcd://leadership-other:$OTHER_PASSWORD@127.0.0.1:24379?ca=$CERTS/ca.crt&cert=$CERTS/client.crt&key=$CERTS/client.key"
	(umask 077 && declare -p candidate_url follower_url other_url >"$dir/m1.urls")
)

start_etcd_secure() {
	local dir data
	member_pid etcd-secure 1 >/dev/null && return 0
	ensure_certs
	dir=$(sdir etcd-secure)
	data="$dir/m1.data"
	# A new data directory (or one whose set-up did not finish, or that was
	# wiped) gets new passwords and is set up again.
	if [[ ! -f $dir/m1.urls || ! -d $data ]]; then
		rm -rf -- "$data" "$dir/m1.urls"
		(umask 077 && printf 'ROOT_PASSWORD=%s\nOTHER_PASSWORD=%s\n' \
			"$(etcd_secure_password)" "$(etcd_secure_password)" >"$dir/m1.secrets")
	fi
	port_free etcd-secure "$ETCD_SECURE_CLIENT" "$ETCD_SECURE_PEER"
	etcd --name leadership-etcd-secure --data-dir "$data" \
		--listen-client-urls "https://127.0.0.1:$ETCD_SECURE_CLIENT" \
		--advertise-client-urls "https://127.0.0.1:$ETCD_SECURE_CLIENT" \
		--cert-file "$CERTS_DIR/server.crt" --key-file "$CERTS_DIR/server.key" \
		--client-cert-auth --trusted-ca-file "$CERTS_DIR/ca.crt" \
		--listen-peer-urls "http://127.0.0.1:$ETCD_SECURE_PEER" \
		--initial-advertise-peer-urls "http://127.0.0.1:$ETCD_SECURE_PEER" \
		--initial-cluster "leadership-etcd-secure=http://127.0.0.1:$ETCD_SECURE_PEER" \
		--initial-cluster-token leadership-etcd-secure --initial-cluster-state new \
		--heartbeat-interval 10 --election-timeout 100 \
		--logger zap --log-outputs stderr \
		</dev/null >>"$(logfile etcd-secure 1)" 2>&1 &
	record_pid etcd-secure 1 $! "$data"
	[[ ! -f $dir/m1.urls ]] || return 0
	etcd_secure_wait_up
	log "etcd-secure: creating roles and users, enabling auth"
	trap 'fail_start etcd-secure "setting up roles and users failed (etcdctl output in the log)"' ERR
	etcd_secure_setup >>"$(logfile etcd-secure 1)" 2>&1
	trap - ERR
}

# etcd_secure_wait_up waits until the new server answers a TLS client.
etcd_secure_wait_up() {
	local deadline
	deadline=$(($(date +%s) + START_TIMEOUT))
	until etcd_secure_ctl endpoint health >/dev/null 2>&1; do
		member_pid etcd-secure 1 >/dev/null || fail_start etcd-secure "exited during start-up"
		(($(date +%s) < deadline)) || fail_start etcd-secure "no TLS answer within ${START_TIMEOUT}s"
		sleep 0.1
	done
}

# check_etcd_secure: a put and a linearizable get over TLS as the
# least-privilege candidate (certificate CN "leadership", which may read
# and write secure/ and leadershiptest/ only), once the set-up is done.
check_etcd_secure() {
	local v
	[[ -f $(sdir etcd-secure)/m1.urls ]] || return 1
	etcd_secure_ctl put secure/leadership-check ok >/dev/null || return 1
	v=$(etcd_secure_ctl get secure/leadership-check --print-value-only) || return 1
	[[ $v == ok ]]
}

env_etcd_secure() {
	local candidate_url follower_url other_url
	# shellcheck source=/dev/null
	source "$(sdir etcd-secure)/m1.urls" || return 0
	echo "export LEADERSHIP_ETCD_SECURE='$candidate_url'"
	echo "export LEADERSHIP_ETCD_SECURE_READER='$follower_url'"
	echo "export LEADERSHIP_ETCD_SECURE_OTHER='$other_url'"
}
