package kubernetes

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/kvtools/valkeyrie/store"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
)

// The kinds of failure this package reports, unexported: programs match
// the shared vocabulary of package github.com/leadership-go/leadership/store
// (lstore here), which each of them matches with errors.Is. Every error of
// Open and of the Store's calls that is not one of valkeyrie's key errors
// (store.ErrKeyNotFound, store.ErrKeyExists, store.ErrKeyModified) is an
// *Error or a *store.ConfigError with exactly one of these kinds; all but
// errUnexpected match a kind of the vocabulary.
var (
	// errInvalidConfig: the Config, the URL or the kubeconfig it names is
	// unusable (a missing file, an unknown context, a bad field). Open
	// returns it before any request.
	errInvalidConfig = adapter.Sentinel("kubernetes: invalid configuration", lstore.ErrInvalidConfig)

	// errInvalidKey: an election key that maps to no Lease name (empty,
	// or too long; see the package documentation). It matches the shared
	// store.ErrInvalidKey, and store.ErrInvalidConfig as before.
	errInvalidKey = adapter.Sentinel("kubernetes: invalid key", lstore.ErrInvalidKey, lstore.ErrInvalidConfig)

	// errAuthentication: the API server refused the credentials (HTTP 401:
	// a wrong or expired token, an unknown client certificate).
	errAuthentication = adapter.Sentinel("kubernetes: authentication refused", lstore.ErrAuth)

	// errPermissionDenied: the API server authenticated the client but
	// its RBAC rules (or another authorizer) refused the call (HTTP 403).
	// The message names the user and the verb the server refused.
	errPermissionDenied = adapter.Sentinel("kubernetes: permission denied", lstore.ErrPermission)

	// errTLS: the API server's certificate could not be verified (an
	// unknown authority, a name or address it is not for, expired), or
	// the server did not speak TLS.
	errTLS = adapter.Sentinel("kubernetes: TLS verification failed", lstore.ErrTLS)

	// errNotReachable: no answer in time, a refused or broken connection,
	// or an answer saying the server cannot serve now (HTTP 429, 5xx). A
	// write that fails so has an unknown outcome. Every error matching it
	// also matches valkeyrie's store.ErrNotReachable.
	errNotReachable = adapter.Sentinel("kubernetes: API server not reachable", store.ErrNotReachable)

	// errNamespaceNotFound: the Config's namespace does not exist on the
	// server (a Lease cannot be created in it).
	errNamespaceNotFound = adapter.Sentinel("kubernetes: namespace not found", lstore.ErrInvalidConfig)

	// errClosed: the Store was closed. It also matches valkeyrie's
	// store.ErrNotReachable, as a closed client reaches no server.
	errClosed = adapter.Sentinel("kubernetes: store closed", lstore.ErrClosed, store.ErrNotReachable)

	// errUnexpected: any other refusal of the API server (an invalid
	// object, an unexpected status), with its message.
	errUnexpected = errors.New("kubernetes: unexpected answer")
)

// Error is a failed call of the Store, or a failed Open: what was tried on
// which Lease, the kind of failure, and the underlying error (the API
// server's status, or the client's error). errors.Is matches the kind of
// the shared vocabulary (package github.com/leadership-go/leadership/store)
// that Kind stands for: store.ErrAuth (HTTP 401), store.ErrPermission
// (403), store.ErrTLS, store.ErrUnreachable (no answer, 429, 5xx),
// store.ErrClosed (which also matches store.ErrUnreachable),
// store.ErrInvalidConfig (a namespace that does not exist) or none (any
// other answer of the API server); it also matches anything Err matches,
// and errors.As reaches Err's types (such as
// *k8s.io/apimachinery/pkg/api/errors.StatusError).
type Error struct {
	// Op is the call: "open", "get", "create", "update", "delete", "list"
	// or "watch".
	Op string
	// Namespace and Lease name the object, when there is one; Key is the
	// election key it stands for.
	Namespace, Lease, Key string
	// Kind is the kind of failure: an error of this package, whose text
	// starts the message, matching the vocabulary's kind with errors.Is.
	Kind error
	// Err is the underlying error.
	Err error
}

// Error describes the failure.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.Error())
	b.WriteString(": ")
	b.WriteString(e.Op)
	if e.Lease != "" {
		fmt.Fprintf(&b, " lease %s/%s", e.Namespace, e.Lease)
		if e.Key != "" && e.Key != e.Lease {
			fmt.Fprintf(&b, " (key %q)", e.Key)
		}
	} else if e.Namespace != "" {
		fmt.Fprintf(&b, " in namespace %s", e.Namespace)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap gives Kind (and so the vocabulary's kind it matches),
// valkeyrie's store.ErrNotReachable (store.ErrUnreachable) when Kind is
// errNotReachable or errClosed, and Err.
func (e *Error) Unwrap() []error {
	errs := []error{e.Kind}
	if e.Kind == errNotReachable || e.Kind == errClosed {
		errs = append(errs, store.ErrNotReachable)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// invalid is the *store.ConfigError (the shared vocabulary's) of an
// unusable Config or URL, reported by Open or parseURL before any request:
// errors.Is(err, store.ErrInvalidConfig) is true; err, when set, is reachable with
// errors.Is and errors.As.
func invalid(field, reason string, err error) error {
	return &lstore.ConfigError{Invalid: errInvalidConfig, Field: field, Reason: reason, Err: err}
}

// kindOf classifies an error of client-go or of the API server. It returns
// nil for the errors that map to valkeyrie's key errors, which the caller
// handles.
func kindOf(err error) error {
	var status apierrors.APIStatus
	switch {
	case errors.Is(err, errClosed):
		return errClosed
	case errors.As(err, &status):
		code := status.Status().Code
		switch {
		case apierrors.IsUnauthorized(err):
			return errAuthentication
		case apierrors.IsForbidden(err):
			return errPermissionDenied
		case apierrors.IsTooManyRequests(err), apierrors.IsServerTimeout(err),
			apierrors.IsTimeout(err), apierrors.IsServiceUnavailable(err),
			apierrors.IsInternalError(err), code >= 500:
			return errNotReachable
		}
		return errUnexpected
	case isTLS(err):
		return errTLS
	}
	// Anything else is the transport's: a dial that failed, a connection
	// that broke, a deadline.
	return errNotReachable
}

// isTLS reports whether err is a failure to verify the server's
// certificate, or a server that did not answer the TLS handshake with TLS.
func isTLS(err error) bool {
	var (
		unknown   x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verifying *tls.CertificateVerificationError
		record    tls.RecordHeaderError
	)
	return errors.As(err, &unknown) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &verifying) ||
		errors.As(err, &record) ||
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client")
}
