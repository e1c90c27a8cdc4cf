# scripts/secure/zookeeper.sh: the secured ZooKeeper (sourced by servers.sh).
#
# One standalone server that speaks TLS only (Netty, secureClientPort 24182,
# client certificates required, no plaintext port), with digest identities:
#
#   candidate  may create, read, write and delete below /leadershiptest and
#              /secure (the prefixes the secured tests use), and its nodes
#              are created with an ACL that only it may write
#   reader     may only read them (a follower)
#   other      has no right on them
#   super      the administrator (zookeeper.DigestAuthenticationProvider.superDigest),
#              used by this script only, to create /leadershiptest and /secure
#
# The root znode is read-only for everyone else, so that no identity can
# delete or replace the parents. Passwords are drawn at the first start and
# kept in $STATE/zookeeper-secure/secrets (mode 600), never committed.

SECURE_SERVERS+=(zookeeper-secure)

ZK_SEC_PORT=24182
ZK_SEC_CP=$ZK_CP:/usr/share/java/netty-codec.jar:/usr/share/java/netty-resolver.jar:/usr/share/java/netty-transport-native-unix-common.jar

# zk_sec_secrets: the identities' passwords (drawn once per state dir).
zk_sec_secrets() {
	local f u
	f="$(sdir zookeeper-secure)/secrets"
	if [[ ! -s $f ]]; then
		mkdir -p "$(dirname "$f")"
		(
			umask 077
			for u in super candidate reader other; do
				printf '%s=%s\n' "$u" "$(head -c 18 /dev/urandom | base64 | tr -d '/+=')"
			done >"$f.tmp"
			mv -f "$f.tmp" "$f"
		)
	fi
	# shellcheck disable=SC1090
	ZK_SEC_PW_SUPER=$(sed -n 's/^super=//p' "$f")
	ZK_SEC_PW_CANDIDATE=$(sed -n 's/^candidate=//p' "$f")
	ZK_SEC_PW_READER=$(sed -n 's/^reader=//p' "$f")
	ZK_SEC_PW_OTHER=$(sed -n 's/^other=//p' "$f")
}

# zk_digest USER PASSWORD: ZooKeeper's digest id of an identity,
# USER:base64(sha1(USER:PASSWORD)), as in its ACLs.
zk_digest() { printf '%s:%s' "$1" "$(printf '%s:%s' "$1" "$2" | openssl dgst -binary -sha1 | openssl base64 -A)"; }

# urlq: percent-encode a query parameter's value (base64 holds + / =).
urlq() { local s=$1; s=${s//%/%25}; s=${s//+/%2B}; s=${s//\//%2F}; s=${s//=/%3D}; s=${s//,/%2C}; s=${s//:/%3A}; printf '%s' "$s"; }

start_zookeeper_secure() {
	local dir data cfg
	member_pid zookeeper-secure 1 >/dev/null && return 0
	ensure_certs
	zk_sec_secrets
	port_free zookeeper-secure "$ZK_SEC_PORT"
	dir=$(sdir zookeeper-secure)
	data="$dir/m1.data"
	cfg="$dir/m1.cfg"
	mkdir -p "$data"
	# Java reads a PEM key store holding the key and its certificate.
	(umask 077 && cat "$CERTS_DIR/server.key" "$CERTS_DIR/server.crt" >"$dir/server.pem")
	(umask 077 && cat "$CERTS_DIR/client.key" "$CERTS_DIR/client.crt" >"$dir/client.pem")
	cat >"$cfg" <<-EOF
		tickTime=200
		dataDir=$data
		minSessionTimeout=400
		maxSessionTimeout=60000
		maxClientCnxns=0
		admin.enableServer=false
		4lw.commands.whitelist=
		ssl.keyStore.location=$dir/server.pem
		ssl.trustStore.location=$CERTS_DIR/ca.crt
		# docs:begin
		# TLS only (no clientPort), client certificates required
		secureClientPort=24182
		secureClientPortAddress=127.0.0.1
		serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory
		ssl.keyStore.type=PEM
		ssl.trustStore.type=PEM
		ssl.clientAuth=need
		ssl.hostnameVerification=false
		# docs:end
	EOF
	java -Xms32m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
		-Dorg.slf4j.simpleLogger.showDateTime=true \
		-Dzookeeper.jmx.log4j.disable=true \
		-Dzookeeper.DigestAuthenticationProvider.superDigest="$(zk_digest super "$ZK_SEC_PW_SUPER")" \
		-cp "$ZK_SEC_CP" org.apache.zookeeper.server.ZooKeeperServerMain "$cfg" \
		</dev/null >>"$(logfile zookeeper-secure 1)" 2>&1 &
	record_pid zookeeper-secure 1 $! "$cfg"
}

# zk_sec_cli USER: ZooKeeper's CLI over TLS (client certificate, CA), logged
# in as USER; commands on stdin.
zk_sec_cli() {
	local dir pw
	dir=$(sdir zookeeper-secure)
	case $1 in
	super) pw=$ZK_SEC_PW_SUPER ;;
	candidate) pw=$ZK_SEC_PW_CANDIDATE ;;
	*) return 1 ;;
	esac
	{
		printf 'addauth digest %s:%s\n' "$1" "$pw"
		cat
		printf 'quit\n'
	} | timeout 20 java -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
		-Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
		-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty \
		-Dzookeeper.client.secure=true \
		-Dzookeeper.ssl.keyStore.location="$dir/client.pem" -Dzookeeper.ssl.keyStore.type=PEM \
		-Dzookeeper.ssl.trustStore.location="$CERTS_DIR/ca.crt" -Dzookeeper.ssl.trustStore.type=PEM \
		-cp "$ZK_SEC_CP" org.apache.zookeeper.ZooKeeperMain -server "127.0.0.1:$ZK_SEC_PORT" 2>&1
}

# zk_sec_bootstrap: as super, once per data dir, make the root read-only
# and create the election prefixes: the candidate may create, read and
# delete their children, the reader read them, everyone list them (so that
# a refused identity can be told why: wrong password or no right).
zk_sec_bootstrap() {
	local data out parent acl
	data="$(sdir zookeeper-secure)/m1.data"
	[[ -f $data/bootstrapped ]] && return 0
	acl="world:anyone:r,digest:$(zk_digest candidate "$ZK_SEC_PW_CANDIDATE"):crd,digest:$(zk_digest reader "$ZK_SEC_PW_READER"):r"
	out=$(
		for parent in /leadershiptest /secure; do
			printf 'create %s ""\nsetAcl %s %s\n' "$parent" "$parent" "$acl"
		done
		printf 'setAcl / world:anyone:r\ngetAcl /leadershiptest\ngetAcl /secure\n'
	) || return 1
	out=$(zk_sec_cli super <<<"$out") || true
	# Both prefixes must show the reader's entry: the CLI may run the first
	# commands before its session is up, and the check runs this again.
	(($(grep -c "^'digest,'reader:" <<<"$out") >= 2)) || return 1
	touch "$data/bootstrapped"
}

# A real session as the candidate, over TLS: create, read and delete a
# znode under /secure with the ACL the tests use.
check_zookeeper_secure() {
	local node out
	zk_sec_secrets
	zk_sec_bootstrap || return 1
	node="/secure/leadership-check-$$-$RANDOM"
	out=$(printf 'create %s ok digest:%s:cdrwa,digest:%s:r\nget %s\ndelete %s\n' "$node" "$(zk_digest candidate "$ZK_SEC_PW_CANDIDATE")" \
		"$(zk_digest reader "$ZK_SEC_PW_READER")" "$node" "$node" | zk_sec_cli candidate) || true
	grep -q "^Created $node" <<<"$out" && grep -qx 'ok' <<<"$out"
}

env_zookeeper_secure() {
	local tls base
	zk_sec_secrets
	tls="ca=$CERTS_DIR/ca.crt&cert=$CERTS_DIR/client.crt&key=$CERTS_DIR/client.key"
	base="127.0.0.1:$ZK_SEC_PORT?$tls"
	echo "export LEADERSHIP_ZK_SECURE='zk://candidate:$ZK_SEC_PW_CANDIDATE@$base&acl=auth::cdrwa,digest:$(urlq "$(zk_digest reader "$ZK_SEC_PW_READER")"):r'"
	echo "export LEADERSHIP_ZK_SECURE_READER='zk://reader:$ZK_SEC_PW_READER@127.0.0.1:$ZK_SEC_PORT?ca=$CERTS_DIR/ca.crt&cert=$CERTS_DIR/reader.crt&key=$CERTS_DIR/reader.key'"
	echo "export LEADERSHIP_ZK_SECURE_OTHER='zk://other:$ZK_SEC_PW_OTHER@$base'"
}
