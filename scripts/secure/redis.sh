# shellcheck shell=bash
# scripts/secure/redis.sh: the secured Redis server, sourced by
# scripts/servers.sh. TLS only (no plain-text port), client certificates
# required, no anonymous user, and three ACL users:
#
#   leadership         the CANDIDATE: reads and writes keys under
#                      leadershiptest/ and secure/, and nothing else
#   leadership-reader  the READER (a follower): reads them only
#   other              the OTHER identity: no rights on them (other/ only)
#
# Their passwords are random, generated once per state dir into
# $(sdir redis-secure)/*.pass; the server keeps their SHA-256 only.

SECURE_SERVERS+=(redis-secure)
REDIS_SECURE_PORT=24679

# redis_secure_pass NAME: that identity's password, generated once.
redis_secure_pass() {
	local f
	f="$(sdir redis-secure)/$1.pass"
	if [[ ! -s $f ]]; then
		(umask 077 && od -An -tx1 -N16 /dev/urandom | tr -d ' \n' >"$f")
	fi
	cat "$f"
}

# redis_secure_setup: writes redis.conf and users.acl into the state dir
# and sets candidate_url and follower_url. The part between docs:begin and
# docs:end is the copy-paste example of docs/backends.md ("Redis",
# "Secured"), with DIR, CERTS, PORT and the passwords set first.
redis_secure_setup() {
	local DIR CERTS PORT CANDIDATE_PASS READER_PASS OTHER_PASS mask
	DIR=$(sdir redis-secure)
	CERTS=$CERTS_DIR
	PORT=$REDIS_SECURE_PORT
	CANDIDATE_PASS=$(redis_secure_pass candidate)
	READER_PASS=$(redis_secure_pass reader)
	OTHER_PASS=$(redis_secure_pass other)
	mask=$(umask)
	umask 077
	# docs:begin
	# TLS only, client certificates required, keyspace notifications on
	# (the adapter's watches; clients cannot set them: CONFIG is not granted).
	cat >"$DIR/redis.conf" <<EOF
bind 127.0.0.1
port 0
tls-port $PORT
tls-cert-file $CERTS/server.crt
tls-key-file $CERTS/server.key
tls-ca-cert-file $CERTS/ca.crt
tls-auth-clients yes
notify-keyspace-events KEA
aclfile $DIR/users.acl
save ""
appendonly no
proc-title-template "{title} {listen-addr} {server-mode} {config-file}"
EOF
	# Users: no anonymous access; passwords stored as SHA-256 only.
	# The candidate reads and writes the election's keys (and their
	# keyspace channels in database 0); the follower only reads them.
	sha256() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
	cat >"$DIR/users.acl" <<EOF
user default off resetkeys resetchannels -@all
user leadership on #$(sha256 "$CANDIDATE_PASS") resetkeys ~leadershiptest/* ~secure/* resetchannels &__keyspace@0__:leadershiptest/* &__keyspace@0__:secure/* -@all +get +mget +exists +set +del +eval +evalsha +subscribe +unsubscribe +ping
user leadership-reader on #$(sha256 "$READER_PASS") resetkeys %R~leadershiptest/* %R~secure/* resetchannels &__keyspace@0__:leadershiptest/* &__keyspace@0__:secure/* -@all +get +mget +exists +subscribe +unsubscribe +ping
EOF
	# The store URLs (open.Store, $LEADERSHIP_STORE) of a candidate and of a follower:
	candidate_url="rediss://leadership:$CANDIDATE_PASS@127.0.0.1:$PORT?ca=$CERTS/ca.crt&cert=$CERTS/client.crt&key=$CERTS/client.key"
	follower_url="rediss://leadership-reader:$READER_PASS@127.0.0.1:$PORT?ca=$CERTS/ca.crt&cert=$CERTS/reader.crt&key=$CERTS/reader.key"
	# docs:end
	# The OTHER identity of the tests: the candidate's commands, on other/ only.
	cat >>"$DIR/users.acl" <<EOF
user other on #$(sha256 "$OTHER_PASS") resetkeys ~other/* resetchannels &__keyspace@0__:other/* -@all +get +mget +exists +set +del +eval +evalsha +subscribe +unsubscribe +ping
EOF
	other_url="rediss://other:$OTHER_PASS@127.0.0.1:$PORT?ca=$CERTS/ca.crt&cert=$CERTS/client.crt&key=$CERTS/client.key"
	umask "$mask"
}

start_redis_secure() {
	local dir
	member_pid redis-secure 1 >/dev/null && return 0
	ensure_certs
	port_free redis-secure "$REDIS_SECURE_PORT"
	dir=$(sdir redis-secure)
	redis_secure_setup
	redis-server "$dir/redis.conf" --dir "$dir" --daemonize no --logfile '' \
		</dev/null >>"$(logfile redis-secure 1)" 2>&1 &
	# The title redis sets a moment after start shows the config file too
	# (proc-title-template): both forms of its command line contain it.
	record_pid redis-secure 1 $! "$dir/redis.conf"
}

# check_redis_secure: a round trip as the least-privilege candidate, over
# TLS with its client certificate.
check_redis_secure() {
	local certs=$CERTS_DIR pass r
	pass=$(redis_secure_pass candidate)
	# the password goes through the environment, not the command line
	r=(env REDISCLI_AUTH="$pass" timeout 3 redis-cli -h 127.0.0.1 -p "$REDIS_SECURE_PORT" --tls
		--cacert "$certs/ca.crt" --cert "$certs/client.crt" --key "$certs/client.key"
		--user leadership)
	[[ $("${r[@]}" set secure/check ok) == OK ]] &&
		[[ $("${r[@]}" get secure/check) == ok ]]
}

env_redis_secure() {
	local candidate_url follower_url other_url
	redis_secure_setup
	echo "export LEADERSHIP_REDIS_SECURE='$candidate_url'"
	echo "export LEADERSHIP_REDIS_SECURE_READER='$follower_url'"
	echo "export LEADERSHIP_REDIS_SECURE_OTHER='$other_url'"
}
