# scripts/secure/consul.sh: the secured Consul agent (sourced by servers.sh).
#
# consul-secure: one agent (in memory, as the plaintext one) serving HTTPS
# only on 127.0.0.1:24500 with the certificates of ensure_certs, client
# certificates required (tls.https.verify_incoming), and ACLs in
# default-deny mode. Its setup (the block between docs:begin and docs:end,
# shown verbatim in docs/backends.md) makes two policies and two tokens:
# a candidate's, which may write the election prefixes "leadershiptest/"
# and "secure/" and nothing else, and a follower's, which may only read
# them. A third token (OTHER) has rights on another prefix only. The
# tokens' secrets are kept in tokens.env (mode 600) in the state dir.
SECURE_SERVERS+=(consul-secure)

CONSUL_SECURE_HTTPS=24500
CONSUL_SECURE_SERVER=24300
CONSUL_SECURE_SERF_LAN=24301
CONSUL_SECURE_SERF_WAN=24302

# consul_secure_cli runs the consul CLI against the secured agent over
# TLS with the client certificate, as the token in CONSUL_HTTP_TOKEN.
consul_secure_cli() {
	CONSUL_HTTP_ADDR="https://127.0.0.1:$CONSUL_SECURE_HTTPS" \
		CONSUL_CACERT="$CERTS_DIR/ca.crt" \
		CONSUL_CLIENT_CERT="$CERTS_DIR/client.crt" CONSUL_CLIENT_KEY="$CERTS_DIR/client.key" \
		timeout 10 "$CONSUL_BIN" "$@"
}

# consul_secure_setup creates the policies and tokens (as the management
# token) and writes their secrets to tokens.env.
consul_secure_setup() {
	local dir=$1
	(
		set -euo pipefail
		CERTS=$CERTS_DIR
		MANAGEMENT_TOKEN=$(<"$dir/management.token")
		PATH=$(dirname "$CONSUL_BIN"):$PATH
		# docs:begin
		export CONSUL_HTTP_ADDR=https://127.0.0.1:24500 CONSUL_CACERT=$CERTS/ca.crt
		export CONSUL_CLIENT_CERT=$CERTS/client.crt CONSUL_CLIENT_KEY=$CERTS/client.key
		export CONSUL_HTTP_TOKEN=$MANAGEMENT_TOKEN
		consul acl policy create -name leadership-candidate -rules - <<-'EOF'
			key_prefix "leadershiptest/" { policy = "write" }
			key_prefix "secure/" { policy = "write" }
		EOF
		consul acl policy create -name leadership-follower -rules - <<-'EOF'
			key_prefix "leadershiptest/" { policy = "read" }
			key_prefix "secure/" { policy = "read" }
		EOF
		CANDIDATE_TOKEN=$(consul acl token create -policy-name leadership-candidate | awk '$1 == "SecretID:" {print $2}')
		FOLLOWER_TOKEN=$(consul acl token create -policy-name leadership-follower | awk '$1 == "SecretID:" {print $2}')
		CANDIDATE_URL="consul://127.0.0.1:24500?ca=$CERTS/ca.crt&cert=$CERTS/client.crt&key=$CERTS/client.key&token=$CANDIDATE_TOKEN"
		FOLLOWER_URL="consul://127.0.0.1:24500?ca=$CERTS/ca.crt&cert=$CERTS/reader.crt&key=$CERTS/reader.key&token=$FOLLOWER_TOKEN"
		# docs:end
		consul acl policy create -name leadership-other -rules - >/dev/null <<-'EOF'
			key_prefix "other/" { policy = "write" }
		EOF
		OTHER_TOKEN=$(consul acl token create -policy-name leadership-other | awk '$1 == "SecretID:" {print $2}')
		OTHER_URL="consul://127.0.0.1:24500?ca=$CERTS/ca.crt&cert=$CERTS/client.crt&key=$CERTS/client.key&token=$OTHER_TOKEN"
		[[ -n $CANDIDATE_TOKEN && -n $FOLLOWER_TOKEN && -n $OTHER_TOKEN ]] || exit 1
		printf 'CANDIDATE_TOKEN=%s\nCANDIDATE_URL=%s\nFOLLOWER_URL=%s\nOTHER_URL=%s\n' \
			"$CANDIDATE_TOKEN" "$CANDIDATE_URL" "$FOLLOWER_URL" "$OTHER_URL" >&3
	) 3>"$dir/tokens.env.tmp" >>"$(logfile consul-secure 1)" 2>&1 || return 1
	mv -f "$dir/tokens.env.tmp" "$dir/tokens.env"
}

# consul_secure_token NAME: a value of tokens.env (CANDIDATE_TOKEN, ...).
consul_secure_token() {
	local f
	f="$(sdir consul-secure)/tokens.env"
	[[ -r $f ]] || return 1
	sed -n "s/^$1=//p" "$f"
}

start_consul_secure() {
	local dir cfg pid deadline
	member_pid consul-secure 1 >/dev/null && return 0
	consul_ok || die "consul binary missing or broken at $CONSUL_BIN: run '$0 install consul'"
	ensure_certs
	port_free consul-secure "$CONSUL_SECURE_HTTPS" "$CONSUL_SECURE_SERVER" \
		"$CONSUL_SECURE_SERF_LAN" "$CONSUL_SECURE_SERF_WAN"
	dir=$(sdir consul-secure)
	cfg="$dir/agent.hcl"
	rm -f "$dir/tokens.env"
	(umask 077 && : >"$dir/tokens.env.tmp")
	# A throwaway agent: its management token is new for each state dir.
	[[ -s $dir/management.token ]] ||
		(umask 077 && cat /proc/sys/kernel/random/uuid >"$dir/management.token")
	(
		umask 077
		cat >"$cfg" <<-EOF
			# Secured test agent (scripts/secure/consul.sh): HTTPS only, client
			# certificates required, ACLs deny by default.
			node_name = "leadership-secure"
			log_level = "INFO"
			session_ttl_min = "1s"
			disable_update_check = true
			ports {
			  http = -1
			  https = $CONSUL_SECURE_HTTPS
			  dns = -1
			  grpc = -1
			  grpc_tls = -1
			  server = $CONSUL_SECURE_SERVER
			  serf_lan = $CONSUL_SECURE_SERF_LAN
			  serf_wan = $CONSUL_SECURE_SERF_WAN
			}
			tls {
			  defaults {
			    ca_file = "$CERTS_DIR/ca.crt"
			    cert_file = "$CERTS_DIR/server.crt"
			    key_file = "$CERTS_DIR/server.key"
			  }
			  https {
			    verify_incoming = true
			  }
			}
			acl {
			  enabled = true
			  default_policy = "deny"
			  down_policy = "deny"
			  enable_token_persistence = false
			  tokens {
			    initial_management = "$(<"$dir/management.token")"
			    agent = "$(<"$dir/management.token")"
			  }
			}
		EOF
	)
	"$CONSUL_BIN" agent -dev -bind 127.0.0.1 -client 127.0.0.1 -config-file "$cfg" \
		</dev/null >>"$(logfile consul-secure 1)" 2>&1 &
	pid=$!
	record_pid consul-secure 1 "$pid" "$cfg"
	# The ACL system answers once the agent leads its cluster: then set up.
	deadline=$(($(date +%s) + START_TIMEOUT))
	until CONSUL_HTTP_TOKEN=$(<"$dir/management.token") consul_secure_cli acl token read -self >/dev/null 2>&1; do
		member_pid consul-secure 1 >/dev/null || fail_start consul-secure "the agent exited during start-up"
		(($(date +%s) < deadline)) || fail_start consul-secure "ACLs not ready within ${START_TIMEOUT}s"
		sleep 0.2
	done
	consul_secure_setup "$dir" || fail_start consul-secure "creating the policies and tokens failed"
}

# check_consul_secure: a KV round trip over TLS with the candidate's
# (least-privilege) token.
check_consul_secure() {
	local token v
	token=$(consul_secure_token CANDIDATE_TOKEN) && [[ -n $token ]] || return 1
	CONSUL_HTTP_TOKEN=$token consul_secure_cli kv put secure/leadership-check ok >/dev/null || return 1
	v=$(CONSUL_HTTP_TOKEN=$token consul_secure_cli kv get secure/leadership-check) || return 1
	[[ $v == ok ]]
}

env_consul_secure() {
	local u
	for u in CANDIDATE:'' FOLLOWER:_READER OTHER:_OTHER; do
		printf "export LEADERSHIP_CONSUL_SECURE%s='%s'\n" "${u#*:}" "$(consul_secure_token "${u%%:*}_URL")"
	done
}
