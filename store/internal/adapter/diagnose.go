package adapter

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/kvtools/valkeyrie/store"

	lstore "github.com/leadership-go/leadership/store"
)

// diagnoseTimeout bounds each connection Dial and Diagnose make.
const diagnoseTimeout = 2 * time.Second

// Dial reports whether any of endpoints accepts a TCP connection before
// ctx ends (at most diagnoseTimeout each, all at once): nil if one does,
// else the first endpoint's dial error ("connect: connection refused").
// Adapters whose clients retry a refused dial until their deadline (gRPC)
// call it first, so that a closed port is named at once.
func Dial(ctx context.Context, endpoints []string) error {
	ctx, cancel := context.WithTimeout(ctx, diagnoseTimeout)
	defer cancel()
	errs := make([]error, len(endpoints))
	done := make(chan int, len(endpoints))
	for i, ep := range endpoints {
		go func() {
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", ep)
			if err == nil {
				_ = c.Close()
			}
			errs[i] = err
			done <- i
		}()
	}
	for range endpoints {
		if errs[<-done] == nil {
			return nil
		}
	}
	return errs[0]
}

// ErrServerSpeaksTLS is Diagnose's finding that a server asked in plain
// text answers a TLS handshake.
var ErrServerSpeaksTLS = Sentinel("the server speaks TLS: give tls=true (and ca=FILE to trust its certificate)", lstore.ErrTLS)

// ErrServerSpeaksPlain is Diagnose's finding that a server asked in TLS
// closes the connection or answers in plain text.
var ErrServerSpeaksPlain = Sentinel("the server does not speak TLS: drop tls, ca, cert and key from the configuration", lstore.ErrTLS)

// ErrNoHandshake is Diagnose's finding that a server asked in TLS left
// the handshake unanswered, as a plain-text server waiting for a whole
// command does.
var ErrNoHandshake = Sentinel("the server did not answer a TLS handshake", lstore.ErrTLS)

// Diagnose explains why a client that reached endpoint's port got no
// answer, when a TLS mismatch is the cause: with cfg (TLS asked for), the
// handshake's error ("tls: first record does not look like a TLS
// handshake", an unknown authority); without, ErrServerSpeaksTLS when the
// server completes a TLS handshake. It returns nil when it finds neither.
func Diagnose(ctx context.Context, endpoint string, cfg *tls.Config) error {
	ctx, cancel := context.WithTimeout(ctx, diagnoseTimeout)
	defer cancel()
	probe := cfg
	if probe == nil {
		probe = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // only asks whether the server speaks TLS
	}
	c, err := DialTLS(ctx, endpoint, probe)
	if err == nil {
		_ = c.Close()
	}
	var opErr *net.OpError
	var recordErr tls.RecordHeaderError
	switch {
	case cfg == nil && err == nil:
		return fmt.Errorf("%s: %w", endpoint, ErrServerSpeaksTLS)
	case cfg == nil, err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w within %v (does it speak TLS?)", endpoint, ErrNoHandshake, diagnoseTimeout)
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return nil // not a handshake failure
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET), errors.As(err, &recordErr):
		return fmt.Errorf("%s: %w (%w)", endpoint, ErrServerSpeaksPlain, err)
	}
	return Tag(fmt.Errorf("TLS handshake with %s failed: %w", endpoint, err), lstore.ErrTLS)
}

// Explain returns err, the failure of an Open whose server got no answer,
// or, when Diagnose finds a TLS mismatch on one of endpoints, an
// *UnreachableError of backend saying so. Other errors (a refused
// password) and a cancelled ctx keep err.
func Explain(ctx context.Context, backend string, endpoints []string, cfg *tls.Config, err error) error {
	silent := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, store.ErrNotReachable) || errors.Is(err, io.EOF)
	if !silent || errors.Is(ctx.Err(), context.Canceled) {
		return err
	}
	for _, ep := range endpoints {
		if found := Diagnose(context.WithoutCancel(ctx), ep, cfg); found != nil {
			return &UnreachableError{Backend: backend, Endpoints: endpoints, Err: found}
		}
	}
	return err
}
