package adapter

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"time"

	lstore "github.com/leadership-go/leadership/store"
)

// OpenDeadline is when an Open bounded by dial must be done: dial from
// now, or ctx's deadline if that is sooner. When ctx is already done it
// returns ctx's error instead, and the Open ends there.
func OpenDeadline(ctx context.Context, dial time.Duration) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	deadline := time.Now().Add(dial)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return deadline, nil
}

// OpenError classifies a failure err of backend's Open of endpoints:
// ctx's error when ctx was cancelled; an *UnreachableError naming
// endpoints when unreachable(err); else err, prefixed with the backend and
// the endpoints. A TLS failure (see TLSFailure) also matches the shared
// store.ErrTLS.
func OpenError(ctx context.Context, backend string, endpoints []string, err error, unreachable func(error) bool) error {
	return tlsTagged(openError(ctx, backend, endpoints, err, unreachable))
}

func openError(ctx context.Context, backend string, endpoints []string, err error, unreachable func(error) bool) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	var already *UnreachableError
	if errors.As(err, &already) {
		return err
	}
	if unreachable(err) {
		return &UnreachableError{Backend: backend, Endpoints: endpoints, Err: err}
	}
	return fmt.Errorf("%s: open %s: %w", backend, strings.Join(endpoints, ","), err)
}

// TLSFailure reports whether err comes from a failed TLS handshake: a
// certificate that does not verify (unknown authority, wrong host name,
// expired), a TLS alert of the server, or a reply that is not TLS.
func TLSFailure(err error) bool {
	var (
		unknown  x509.UnknownAuthorityError
		host     x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
		alert    tls.AlertError
		record   tls.RecordHeaderError
		echoFail *tls.ECHRejectionError
	)
	return errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid) || errors.As(err, &verify) ||
		errors.As(err, &alert) || errors.As(err, &record) || errors.As(err, &echoFail) || RemoteAlert(err) != nil
}

// tlsTagged is err, made to match the shared store.ErrTLS when it is a TLS
// failure.
func tlsTagged(err error) error {
	if _, ok := err.(*UnreachableError); ok { //nolint:errorlint // its own Is says so
		return err
	}
	if err != nil && TLSFailure(err) {
		return Tag(err, lstore.ErrTLS)
	}
	return err
}
