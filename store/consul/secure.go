package consul

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/consul/api"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
)

var (
	// errPermissionDenied is matched by the error (an *ACLError) of a
	// call the agent refused because its ACL token lacks a right, such as
	// key:write on the election's key. It matches the shared
	// store.ErrPermission.
	errPermissionDenied = adapter.Sentinel("consul: permission denied", lstore.ErrPermission)

	// errTokenNotFound is matched by the error (an *ACLError) of a call
	// made with an ACL token the agent does not know ("ACL not found"): a
	// mistyped or deleted token, or one of another cluster. Open checks
	// the token, so it reports this at once. It matches the shared
	// store.ErrAuth.
	errTokenNotFound = adapter.Sentinel("consul: ACL token not found", lstore.ErrAuth)

	// errServerCertificate is matched by the error of a call whose TLS
	// handshake failed because the agent's certificate is not trusted:
	// signed by a CA not given (Config.TLS.RootCAs; ca=FILE in a URL),
	// expired, or not issued for the name dialled. The error is a
	// *certificateError, wrapped in an *unreachableError. It matches the
	// shared store.ErrTLS.
	errServerCertificate = adapter.Sentinel("consul: the agent's TLS certificate is not trusted", lstore.ErrTLS)

	// errClientCertificate is matched by the error of a call whose TLS
	// handshake failed because the agent refused the client certificate
	// (signed by a CA it does not trust, expired) or requires one and
	// none was given. The error is a *certificateError, wrapped in an
	// *unreachableError. It matches the shared store.ErrTLS.
	errClientCertificate = adapter.Sentinel("consul: the agent refused the client certificate", lstore.ErrTLS)
)

// ACLError is a request the agent refused because of its ACL token: the
// token lacks a right (errors.Is(err, errPermissionDenied)), or the agent
// does not know the token (errors.Is(err, errTokenNotFound)). It never
// holds the token's secret; Accessor is the token's public AccessorID.
type ACLError struct {
	// Op is the call refused ("get", "atomic put", "open", ...).
	Op string
	// Err is errPermissionDenied or errTokenNotFound.
	Err error
	// Permission is the right the token lacks, as Consul names it
	// ("key:read", "key:write"), when known.
	Permission string
	// Resource is what the right is missing on (the key), when known.
	Resource string
	// Accessor is the AccessorID of the token refused, when the agent
	// named it.
	Accessor string
	// Anonymous reports that no token was sent, so that the agent applied
	// the anonymous token's rights.
	Anonymous bool
	// Detail is the agent's own message, when Permission is unknown.
	Detail string
}

// Error says what was refused and why, on one line.
func (e *ACLError) Error() string {
	msg := "consul: "
	if e.Op != "" {
		msg += e.Op + ": "
	}
	if errors.Is(e.Err, errTokenNotFound) {
		return msg + "the ACL token is not known to the agent (ACL not found): a wrong or deleted token, or one of another cluster"
	}
	msg += "permission denied: "
	who := "the ACL token"
	switch {
	case e.Anonymous:
		who = "no ACL token was given, and the anonymous token"
	case e.Accessor != "":
		who += " (AccessorID " + e.Accessor + ")"
	}
	switch {
	case e.Permission != "":
		return msg + fmt.Sprintf("%s lacks %s on %q", who, e.Permission, e.Resource)
	case e.Detail != "":
		return msg + oneLine(e.Detail)
	}
	return msg + who + " lacks a right this call needs"
}

// Unwrap returns errPermissionDenied or errTokenNotFound.
func (e *ACLError) Unwrap() error { return e.Err }

// deniedRE parses Consul's permission errors ("Permission denied: token
// with AccessorID 'ID' lacks permission 'key:write' on \"k\"", or the
// anonymous token's).
var deniedRE = regexp.MustCompile(`(?:token with AccessorID '([^']*)'|(anonymous) token) lacks permission '([^']+)' on "((?:[^"\\]|\\.)*)"`)

// aclMessage is the *ACLError of op for the agent's message msg, or nil
// when msg is not about the ACL token.
func aclMessage(op, msg string) *ACLError {
	switch {
	case strings.Contains(msg, "ACL not found"):
		return &ACLError{Op: op, Err: errTokenNotFound}
	case strings.Contains(msg, "Permission denied"):
		e := &ACLError{Op: op, Err: errPermissionDenied}
		if m := deniedRE.FindStringSubmatch(msg); m != nil {
			e.Accessor, e.Anonymous, e.Permission, e.Resource = m[1], m[2] != "", m[3], strings.ReplaceAll(m[4], `\"`, `"`)
		} else {
			e.Detail = msg
		}
		return e
	}
	return nil
}

// aclError is the *ACLError of op for err, an API error, or nil when err
// is not a refusal over the ACL token: a 403 reply, or (as the API client
// reports refused transactions) "Failed request: ...".
func aclError(op string, err error) *ACLError {
	var se api.StatusError
	var e *ACLError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		if e.Op == "" {
			c := *e
			c.Op = op
			return &c
		}
		return e
	case errors.As(err, &se):
		if se.Code != 403 {
			return nil
		}
		return aclMessage(op, se.Body)
	case strings.HasPrefix(err.Error(), "Failed request: "):
		return aclMessage(op, err.Error())
	}
	return nil
}

// deniedIn is the *ACLError among a rolled back transaction's errors, or
// nil.
func deniedIn(errs []*api.TxnError) *ACLError {
	for _, e := range errs {
		if e != nil {
			if a := aclMessage("", e.What); a != nil {
				return a
			}
		}
	}
	return nil
}

// certificateError is a TLS handshake with the agent that failed over a
// certificate: the agent's (Err matches errServerCertificate) or the
// client's (errClientCertificate). Callers get it wrapped in an
// *unreachableError (errors.As finds it).
type certificateError struct {
	// Problem is errServerCertificate or errClientCertificate.
	Problem error
	// Reason says what is wrong ("signed by an unknown authority", the
	// agent's TLS alert "tls: expired certificate").
	Reason string
	// Hint says what to check, or "".
	Hint string
	// Err is the TLS or X.509 error.
	Err error
}

// Error says which certificate is at fault and why, on one line.
func (e *certificateError) Error() string {
	what := "the agent's TLS certificate is not trusted"
	if errors.Is(e.Problem, errClientCertificate) {
		what = "the agent refused the client certificate"
	}
	msg := what + ": " + e.Reason
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Unwrap returns Problem and Err.
func (e *certificateError) Unwrap() []error { return []error{e.Problem, e.Err} }

// explainTLS returns, for err (a failed HTTP request), an error naming a
// TLS problem it shows: a *certificateError, or adapter.ErrServerSpeaksTLS
// / adapter.ErrServerSpeaksPlain for a scheme the agent does not speak.
// Other errors are returned as they are.
// clientCert tells whether the client had a certificate to offer (the
// agent's "certificate required" then means it accepts none of them).
func explainTLS(err error, clientCert bool) error {
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	var se api.StatusError
	alert := adapter.RemoteAlert(err)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &unknown):
		return &certificateError{Problem: errServerCertificate, Reason: "signed by an unknown authority",
			Hint: "trust the CA that signed it: ca=FILE in a URL, Config.TLS.RootCAs", Err: err}
	case errors.As(err, &invalid):
		return &certificateError{Problem: errServerCertificate, Reason: invalid.Error(), Err: err}
	case errors.As(err, &host):
		return &certificateError{Problem: errServerCertificate, Reason: host.Error(),
			Hint: "dial a name it lists, or give server_name=NAME", Err: err}
	case alert != nil:
		reason := alert.Err.Error()
		hint := "it must be signed by a CA in the agent's tls ca_file and be valid now"
		switch {
		case strings.Contains(reason, "certificate required") && clientCert:
			// A Go client offers only a certificate issued by a CA the
			// agent names as accepted: none was.
			reason, hint = "none of the client certificates given is issued by a CA the agent trusts (the agent asked for one: "+reason+")",
				"use a certificate signed by a CA in the agent's tls ca_file"
		case strings.Contains(reason, "certificate required"):
			reason, hint = "the agent requires a client certificate and none was given (remote error: "+reason+")",
				"give cert=FILE&key=FILE in a URL, Config.TLS.Certificates"
		case strings.Contains(reason, "certificate"):
			reason = "remote error: " + reason
		default:
			return err // another alert: not about certificates
		}
		return &certificateError{Problem: errClientCertificate, Reason: reason, Hint: hint, Err: err}
	case errors.As(err, &se) && se.Code == 400 && strings.Contains(se.Body, "HTTP request to an HTTPS server"):
		return fmt.Errorf("%w (%w)", adapter.ErrServerSpeaksTLS, err)
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"),
		strings.Contains(err.Error(), "first record does not look like a TLS handshake"):
		return fmt.Errorf("%w (%w)", adapter.ErrServerSpeaksPlain, err)
	}
	return err
}

// checkToken asks the agent about the store's ACL token: an *ACLError
// matching errTokenNotFound when the agent does not know it. Every other
// answer passes (ACLs disabled, an agent without the endpoint, a token
// that may not read itself), and so does no token at all: the calls then
// report what they meet.
func (s *kv) checkToken(ctx context.Context) error {
	if s.anonymous {
		return nil // the anonymous token: the agent would say "ACL not found"
	}
	var self struct{ AccessorID string }
	_, err := s.client.Raw().Query("/v1/acl/token/self", &self, (&api.QueryOptions{}).WithContext(ctx))
	if e := aclError("open", err); e != nil && errors.Is(e, errTokenNotFound) {
		return e
	}
	return nil
}

// oneLine joins the lines of s.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
