# shellcheck shell=bash
# scripts/secure/postgres.sh: the secured PostgreSQL test server, sourced by
# scripts/servers.sh (see "Secured" in docs/backends.md, PostgreSQL).
#
# postgres-secure: PostgreSQL 15 on 127.0.0.1:24432, TLS only (hostssl),
# scram-sha-256 passwords AND client certificates whose CN is the role
# (clientcert=verify-full), three roles:
#
#   leadership         the candidate: reads and writes the election table,
#                      only rows under leadershiptest/ and secure/ (row-level
#                      security); it does not own the table
#   leadership-reader  a follower: reads those rows, writes nothing
#   leadership-other   may connect, has no rights on the table
#
# The admin (the postgres superuser, over the Unix socket only) creates the
# table, its sequence, functions and triggers by opening the store once as
# their owner (leadership status), then grants. Passwords are random, made
# once per data directory, kept in STATE/postgres-secure/secrets (mode 600).
# The server's own files (data, socket, log, the setup's leadership binary)
# are in $(wdir postgres-secure), which the postgres user can reach (see
# PG_STATE in servers.sh); secrets, URLs and certificates stay in the
# state dir.

SECURE_SERVERS+=(postgres-secure)

PGS_PORT=24432
PGS_DB=leadership

# pgs_setup configures TLS and authentication, creates the database, the
# roles, the schema and the grants, and writes the URLs. It runs once per
# data directory, on a server started with initdb's defaults. DIR is the
# state dir (secrets, URLs), WDIR the server's (data, socket, binary).
pgs_setup() { # DIR WDIR
	local dir=$1 wd=$2
	local -x PGDATA="$wd/data" PGHOST="$wd/run" PGPORT=$PGS_PORT CERTS=$CERTS_DIR
	local -x PG_BIN LEADERSHIP_BIN="$wd/bin/leadership"
	local -x CANDIDATE_PASSWORD READER_PASSWORD OTHER_PASSWORD
	# shellcheck source=/dev/null
	source "$dir/secrets"
	local CANDIDATE_URL FOLLOWER_URL OTHER_URL

	# docs:begin
	# 1. TLS only, with the CA that signs the client certificates.
	install -o postgres -g postgres -m 0600 "$CERTS/server.crt" "$CERTS/server.key" "$CERTS/ca.crt" "$PGDATA/"
	cat >>"$PGDATA/postgresql.conf" <<-'EOF'
		ssl = on
		ssl_cert_file = 'server.crt'
		ssl_key_file = 'server.key'
		ssl_ca_file = 'ca.crt'
		ssl_min_protocol_version = 'TLSv1.2'
		password_encryption = 'scram-sha-256'
	EOF
	# 2. Over TCP: TLS, a password (SCRAM) and a client certificate whose CN
	#    is the role. The superuser logs in over the Unix socket only.
	cat >"$PGDATA/pg_hba.conf" <<-'EOF'
		local    all         postgres  peer
		hostssl  leadership  leadership,leadership-reader,leadership-other  127.0.0.1/32  scram-sha-256  clientcert=verify-full
	EOF
	as_postgres psql -X -q -d postgres -c 'SELECT pg_reload_conf()' >/dev/null
	# 3. The database and the roles: the candidate, a follower (read only),
	#    and a role without rights on the election table.
	as_postgres psql -X -q -v ON_ERROR_STOP=1 -d postgres <<-'SQL'
		CREATE DATABASE leadership;
		\getenv candidate_pw CANDIDATE_PASSWORD
		\getenv reader_pw READER_PASSWORD
		\getenv other_pw OTHER_PASSWORD
		CREATE ROLE leadership LOGIN PASSWORD :'candidate_pw';
		CREATE ROLE "leadership-reader" LOGIN PASSWORD :'reader_pw';
		CREATE ROLE "leadership-other" LOGIN PASSWORD :'other_pw';
		REVOKE ALL ON DATABASE leadership FROM PUBLIC;
		GRANT CONNECT ON DATABASE leadership TO leadership, "leadership-reader", "leadership-other";
	SQL
	# 4. The table, its sequence, functions and triggers, owned by the admin:
	#    open the store once as the admin (status exits 3: no leader).
	as_postgres "$LEADERSHIP_BIN" status --key setup \
		--store "postgres://postgres@localhost:$PGPORT/leadership?host=$PGHOST&sslmode=disable" >/dev/null || [ $? -eq 3 ]
	# 5. The candidate reads and writes rows, takes indexes from the
	#    sequence; the follower reads. Both only under their key prefixes.
	as_postgres psql -X -q -v ON_ERROR_STOP=1 -d leadership <<-'SQL'
		GRANT SELECT, INSERT, UPDATE, DELETE ON leadership_kv TO leadership;
		GRANT USAGE ON SEQUENCE leadership_kv_idx TO leadership;
		GRANT SELECT ON leadership_kv TO "leadership-reader";
		ALTER TABLE leadership_kv ENABLE ROW LEVEL SECURITY;
		CREATE POLICY candidate ON leadership_kv TO leadership
			USING (starts_with(key, 'leadershiptest/') OR starts_with(key, 'secure/'));
		CREATE POLICY follower ON leadership_kv FOR SELECT TO "leadership-reader"
			USING (starts_with(key, 'leadershiptest/') OR starts_with(key, 'secure/'));
	SQL
	# 6. The URLs (store/open) of a candidate and of a follower.
	CANDIDATE_URL="postgres://leadership:$CANDIDATE_PASSWORD@127.0.0.1:$PGPORT/leadership?sslmode=verify-full&sslrootcert=$CERTS/ca.crt&sslcert=$CERTS/client.crt&sslkey=$CERTS/client.key"
	FOLLOWER_URL="postgres://leadership-reader:$READER_PASSWORD@127.0.0.1:$PGPORT/leadership?sslmode=verify-full&sslrootcert=$CERTS/ca.crt&sslcert=$CERTS/reader.crt&sslkey=$CERTS/reader.key"
	# docs:end

	OTHER_URL="postgres://leadership-other:$OTHER_PASSWORD@127.0.0.1:$PGPORT/leadership?sslmode=verify-full&sslrootcert=$CERTS/ca.crt&sslcert=$dir/other.crt&sslkey=$dir/other.key"
	: >"$dir/env.tmp"
	chmod 600 "$dir/env.tmp"
	(
		printf "export LEADERSHIP_POSTGRES_SECURE='%s'\n" "$CANDIDATE_URL"
		printf "export LEADERSHIP_POSTGRES_SECURE_READER='%s'\n" "$FOLLOWER_URL"
		printf "export LEADERSHIP_POSTGRES_SECURE_OTHER='%s'\n" "$OTHER_URL"
	) >>"$dir/env.tmp"
	mv -f "$dir/env.tmp" "$dir/env"
}

# pgs_other_cert signs, with the test CA, a client certificate for the role
# without rights (CN leadership-other): mkcerts makes none for it.
pgs_other_cert() {
	local dir=$1
	[[ -f $dir/other.crt && -f $dir/other.key ]] && return 0
	(
		umask 077
		openssl ecparam -name prime256v1 -genkey -noout -out "$dir/other.key" &&
			openssl req -new -key "$dir/other.key" -subj /CN=leadership-other |
			openssl x509 -req -CA "$CERTS_DIR/ca.crt" -CAkey "$CERTS_DIR/ca.key" \
				-set_serial "0x$(openssl rand -hex 8)" -days 30 -out "$dir/other.crt" 2>/dev/null
	) || return 1
	chmod 644 "$dir/other.crt"
}

start_postgres_secure() {
	local dir wd data pid
	member_pid postgres-secure 1 >/dev/null && return 0
	ensure_certs
	port_free postgres-secure "$PGS_PORT"
	dir=$(sdir postgres-secure)
	wd=$(wdir postgres-secure)
	data="$wd/data"
	if [[ ! -f $data/PG_VERSION || ! -f $dir/setup.done ]]; then
		# a fresh cluster (also after a setup that did not finish)
		rm -rf "$data" "$dir/env" "$dir/setup.done"
		mkdir -p "$data" "$wd/run" "$wd/bin"
		chmod 700 "$data"
		(
			umask 077
			printf 'CANDIDATE_PASSWORD=%s\nREADER_PASSWORD=%s\nOTHER_PASSWORD=%s\n' \
				"$(openssl rand -hex 16)" "$(openssl rand -hex 16)" "$(openssl rand -hex 16)" >"$dir/secrets"
		)
	fi
	pgs_other_cert "$dir" || fail_start postgres-secure "cannot sign the client certificate of leadership-other"
	touch "$(logfile postgres-secure 1)"
	[[ $EUID -ne 0 ]] || chown postgres:postgres "$data" "$wd/run" "$(logfile postgres-secure 1)"
	chmod 700 "$wd/run"
	if [[ ! -f $data/PG_VERSION ]]; then
		as_postgres "$PG_BIN/initdb" -D "$data" -U postgres --auth-local=peer --auth-host=scram-sha-256 \
			--no-sync -E UTF8 --locale=C --no-instructions >>"$(logfile postgres-secure 1)" 2>&1 ||
			fail_start postgres-secure "initdb failed"
	fi
	as_postgres "$PG_BIN/pg_ctl" start -w -t "$START_TIMEOUT" -D "$data" \
		-l "$(logfile postgres-secure 1)" \
		-o "-c port=$PGS_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$wd/run -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
		</dev/null >/dev/null 2>&1 || fail_start postgres-secure "pg_ctl start failed"
	pid=$(head -n 1 "$data/postmaster.pid")
	record_pid postgres-secure 1 "$pid" "$data"
	[[ -f $dir/setup.done ]] && return 0
	(cd "$REPO_DIR/cmd/leadership" && go build -o "$wd/bin/leadership" .) ||
		fail_start postgres-secure "go build ./cmd/leadership failed"
	chmod 755 "$wd/bin" "$wd/bin/leadership"
	pgs_setup "$dir" "$wd" >>"$(logfile postgres-secure 1)" 2>&1 || fail_start postgres-secure "setup failed"
	touch "$dir/setup.done"
}

# check_postgres_secure: a round trip as the candidate, over TLS with its
# client certificate and password, that reads the election table.
check_postgres_secure() {
	local dir out
	dir=$(sdir postgres-secure)
	[[ -r $dir/secrets ]] || return 1
	out=$(
		# shellcheck source=/dev/null
		source "$dir/secrets"
		PGPASSWORD=$CANDIDATE_PASSWORD PGCONNECT_TIMEOUT=3 timeout 10 psql -X -tAq \
			"host=127.0.0.1 port=$PGS_PORT dbname=$PGS_DB user=leadership sslmode=verify-full sslrootcert=$CERTS_DIR/ca.crt sslcert=$CERTS_DIR/client.crt sslkey=$CERTS_DIR/client.key" \
			-c "SELECT count(*) >= 0 FROM leadership_kv WHERE key LIKE 'secure/%'" \
			-c 'SELECT current_user, ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()'
	) || return 1
	[[ $out == $'t\nleadership|t' ]]
}

env_postgres_secure() {
	cat "$(sdir postgres-secure)/env"
}
