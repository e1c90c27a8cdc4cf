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

// The kinds of failure this package reports. Every error of Open and of
// the Store's calls that is not one of valkeyrie's key errors
// (store.ErrKeyNotFound, store.ErrKeyExists, store.ErrKeyModified) matches
// exactly one of them with errors.Is, and is an *Error or a *store.ConfigError
// (the shared vocabulary's, package github.com/leadership-go/leadership/store).
var (
	// ErrInvalidConfig: the Config, the URL or the kubeconfig it names is
	// unusable (a missing file, an unknown context, a bad field). Open
	// returns it before any request.
	ErrInvalidConfig = adapter.Sentinel("kubernetes: invalid configuration", lstore.ErrInvalidConfig)

	// ErrInvalidKey: an election key that maps to no Lease name (empty,
	// or too long; see the package documentation). It matches the shared
	// store.ErrInvalidKey, and store.ErrInvalidConfig as before.
	ErrInvalidKey = adapter.Sentinel("kubernetes: invalid key", lstore.ErrInvalidKey, lstore.ErrInvalidConfig)

	// ErrAuthentication: the API server refused the credentials (HTTP 401:
	// a wrong or expired token, an unknown client certificate).
	ErrAuthentication = adapter.Sentinel("kubernetes: authentication refused", lstore.ErrAuth)

	// ErrPermissionDenied: the API server authenticated the client but
	// its RBAC rules (or another authorizer) refused the call (HTTP 403).
	// The message names the user and the verb the server refused.
	ErrPermissionDenied = adapter.Sentinel("kubernetes: permission denied", lstore.ErrPermission)

	// ErrTLS: the API server's certificate could not be verified (an
	// unknown authority, a name or address it is not for, expired), or
	// the server did not speak TLS.
	ErrTLS = adapter.Sentinel("kubernetes: TLS verification failed", lstore.ErrTLS)

	// ErrNotReachable: no answer in time, a refused or broken connection,
	// or an answer saying the server cannot serve now (HTTP 429, 5xx). A
	// write that fails so has an unknown outcome. Every error matching it
	// also matches valkeyrie's store.ErrNotReachable.
	ErrNotReachable = adapter.Sentinel("kubernetes: API server not reachable", store.ErrNotReachable)

	// ErrNamespaceNotFound: the Config's namespace does not exist on the
	// server (a Lease cannot be created in it).
	ErrNamespaceNotFound = adapter.Sentinel("kubernetes: namespace not found", lstore.ErrInvalidConfig)

	// ErrClosed: the Store was closed. It also matches valkeyrie's
	// store.ErrNotReachable, as a closed client reaches no server.
	ErrClosed = adapter.Sentinel("kubernetes: store closed", lstore.ErrClosed, store.ErrNotReachable)

	// ErrUnexpected: any other refusal of the API server (an invalid
	// object, an unexpected status), with its message.
	ErrUnexpected = errors.New("kubernetes: unexpected answer")
)

// Error is a failed call of the Store, or a failed Open: what was tried on
// which Lease, the kind of failure (one of this package's sentinels), and
// the underlying error (the API server's status, or the client's error).
// errors.Is matches Kind (and store.ErrNotReachable when Kind is
// ErrNotReachable or ErrClosed) and anything Err matches; errors.As reaches Err's types
// (such as *k8s.io/apimachinery/pkg/api/errors.StatusError).
type Error struct {
	// Op is the call: "open", "get", "create", "update", "delete", "list"
	// or "watch".
	Op string
	// Namespace and Lease name the object, when there is one; Key is the
	// election key it stands for.
	Namespace, Lease, Key string
	// Kind is the sentinel of the failure.
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

// Unwrap gives Kind, store.ErrNotReachable when Kind is ErrNotReachable
// or ErrClosed, and Err.
func (e *Error) Unwrap() []error {
	errs := []error{e.Kind}
	if e.Kind == ErrNotReachable || e.Kind == ErrClosed {
		errs = append(errs, store.ErrNotReachable)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// invalid is the *store.ConfigError (the shared vocabulary's) of an
// unusable Config or URL, reported by Open or ParseURL before any request:
// errors.Is(err, ErrInvalidConfig) and errors.Is(err,
// store.ErrInvalidConfig) are true; err, when set, is reachable with
// errors.Is and errors.As.
func invalid(field, reason string, err error) error {
	return &lstore.ConfigError{Invalid: ErrInvalidConfig, Field: field, Reason: reason, Err: err}
}

// kindOf classifies an error of client-go or of the API server. It returns
// nil for the errors that map to valkeyrie's key errors, which the caller
// handles.
func kindOf(err error) error {
	var status apierrors.APIStatus
	switch {
	case errors.Is(err, ErrClosed):
		return ErrClosed
	case errors.As(err, &status):
		code := status.Status().Code
		switch {
		case apierrors.IsUnauthorized(err):
			return ErrAuthentication
		case apierrors.IsForbidden(err):
			return ErrPermissionDenied
		case apierrors.IsTooManyRequests(err), apierrors.IsServerTimeout(err),
			apierrors.IsTimeout(err), apierrors.IsServiceUnavailable(err),
			apierrors.IsInternalError(err), code >= 500:
			return ErrNotReachable
		}
		return ErrUnexpected
	case isTLS(err):
		return ErrTLS
	}
	// Anything else is the transport's: a dial that failed, a connection
	// that broke, a deadline.
	return ErrNotReachable
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
