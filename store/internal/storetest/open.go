package storetest

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

// Dialer opens a store of the adapter under test on endpoints, with the
// dial timeout given.
type Dialer func(ctx context.Context, endpoints []string, dial time.Duration) (store.Store, error)

// Namer reports whether err is the adapter's *UnreachableError naming
// endpoints.
type Namer func(err error, endpoints []string) bool

// NamesFirstEndpoint is the Namer of an adapter whose
// *adapter.UnreachableError names as many endpoints as were tried, the
// first of them first.
func NamesFirstEndpoint(err error, endpoints []string) bool {
	var ue *adapter.UnreachableError
	return errors.As(err, &ue) && len(ue.Endpoints) == len(endpoints) && ue.Endpoints[0] == endpoints[0]
}

// Unreachable says how an adapter's Open reports servers it cannot reach.
type Unreachable struct {
	// Names reports whether an error is the adapter's *UnreachableError
	// naming the endpoints tried.
	Names Namer
	// WrapsDeadline is set when an Open ended by its context's deadline
	// returns an error wrapping context.DeadlineExceeded.
	WrapsDeadline bool
}

// UnreachableBound is how long an Open with the dial timeout dial may take
// to fail before a test calls it hung: HangBound, or ten times dial if
// that is longer.
func UnreachableBound(dial time.Duration) time.Duration { return max(HangBound, 10*dial) }

// ExpectUnreachable calls open, which must fail because no server at
// endpoints answers: with an error matching store.ErrNotReachable that
// names accepts for endpoints, within bound. A store open returns is
// closed. It returns the error.
func ExpectUnreachable(t *testing.T, endpoints []string, bound time.Duration, names Namer, open func() (store.Store, error)) error {
	t.Helper()
	start := time.Now()
	s, err := open()
	took := time.Since(start)
	if err == nil {
		_ = s.Close()
		t.Fatal("Open succeeded")
	}
	t.Logf("Open(%v) failed after %v: %v", endpoints, took.Round(time.Millisecond), err)
	if !errors.Is(err, store.ErrNotReachable) || !names(err, endpoints) {
		t.Errorf("err = %v (%T), want a store.ErrNotReachable naming %v", err, err, endpoints)
	}
	if took > bound {
		t.Errorf("Open returned after %v: hung", took)
	}
	return err
}

// skipShort skips a test that waits out real dial timeouts of a hung
// server under -short; the full run keeps it.
func skipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("waits out real dial timeouts of a hung server; runs without -short")
	}
}

// OpenUnreachable checks Open where no server answers, in subtests:
//
//   - Refused: on an address nothing listens on, Open fails by a
//     store.ErrNotReachable naming it.
//   - Hung: on a server that accepts connections and never answers, Open
//     fails the same way, by its dial timeout, after connecting, and
//     leaves no connection open.
//   - Deadline: a context deadline shorter than the dial timeout ends Open
//     (by a store.ErrNotReachable naming the server, wrapping
//     context.DeadlineExceeded if u.WrapsDeadline).
//   - Cancelled: a cancelled context, the caller's doing, ends Open with
//     context.Canceled.
//
// Every failure must come within UnreachableBound of the dial timeout.
func OpenUnreachable(t *testing.T, open Dialer, u Unreachable) {
	t.Helper()
	const dial = time.Second
	t.Run("Refused", func(t *testing.T) {
		eps := []string{RefusedAddr(t)}
		ExpectUnreachable(t, eps, UnreachableBound(dial), u.Names, func() (store.Store, error) {
			return open(context.Background(), eps, dial)
		})
	})
	t.Run("Hung", func(t *testing.T) {
		skipShort(t)
		h := NewHungServer(t)
		eps := []string{h.Addr()}
		ExpectUnreachable(t, eps, UnreachableBound(dial), u.Names, func() (store.Store, error) {
			return open(context.Background(), eps, dial)
		})
		if h.Accepted() == 0 {
			t.Fatal("the client never connected to the hung server")
		}
		if n := h.OpenConns(); n != 0 {
			t.Errorf("%d connections to the hung server left open", n)
		}
	})
	t.Run("Deadline", func(t *testing.T) {
		skipShort(t)
		eps := []string{HungAddr(t)}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		err := ExpectUnreachable(t, eps, HangBound, u.Names, func() (store.Store, error) {
			return open(ctx, eps, time.Minute)
		})
		if u.WrapsDeadline && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Open under a 300ms context: %v, want context.DeadlineExceeded well before the dial timeout", err)
		}
	})
	t.Run("Cancelled", func(t *testing.T) {
		skipShort(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if s, err := open(ctx, []string{HungAddr(t)}, dial); !errors.Is(err, context.Canceled) {
			if s != nil {
				_ = s.Close()
			}
			t.Fatalf("cancelled: err = %v", err)
		}
	})
}

// InvalidConfig is a configuration, of the adapter's Config type C, that
// Open must reject.
type InvalidConfig[C any] struct {
	Name   string // names the subtest
	Config C
	Field  string // the field at fault, for adapters whose error names it
}

// RejectsConfigs runs a subtest per case: open must fail on the case's
// Config at once (within HangBound: it reaches no server), with an error
// that rejected accepts for the case's Field.
func RejectsConfigs[C any, S store.Store](t *testing.T, open func(context.Context, C) (S, error), rejected func(err error, field string) bool, cases []InvalidConfig[C]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			start := time.Now()
			s, err := open(context.Background(), tc.Config)
			took := time.Since(start)
			if err == nil {
				_ = s.Close()
				t.Fatalf("Open(%+v) succeeded", tc.Config)
			}
			t.Logf("after %v: %v", took, err)
			if !rejected(err, tc.Field) {
				t.Fatalf("Open(%+v) = %v (%T), want a rejection of the configuration (field %q)", tc.Config, err, err, tc.Field)
			}
			if took > HangBound {
				t.Fatalf("took %v: hung", took)
			}
		})
	}
}

// ConfigRejected is the rejected of RejectsConfigs for an adapter whose
// Open reports an invalid Config by an *adapter.ConfigError matching
// invalid: it accepts such an error naming the case's Field.
func ConfigRejected(invalid error) func(err error, field string) bool {
	return func(err error, field string) bool {
		var ce *adapter.ConfigError
		return errors.As(err, &ce) && errors.Is(err, invalid) && ce.Field == field
	}
}

// NetConfig builds a network adapter's Config, of type C, from the fields
// every one of them has: the endpoints and the dial and request timeouts.
type NetConfig[C any] func(endpoints []string, dial, request time.Duration) C

// Erase turns an adapter's Open, which returns its own *Store, into one
// that returns a store.Store (nil on error, never a typed nil).
func Erase[C any, S store.Store](open func(context.Context, C) (S, error)) func(context.Context, C) (store.Store, error) {
	return func(ctx context.Context, cfg C) (store.Store, error) {
		s, err := open(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// Dialer is the Dialer of open on the Config that cfg builds for the
// endpoints and dial timeout given.
func (cfg NetConfig[C]) Dialer(open func(context.Context, C) (store.Store, error)) Dialer {
	return func(ctx context.Context, endpoints []string, dial time.Duration) (store.Store, error) {
		return open(ctx, cfg(endpoints, dial, 0))
	}
}

// Invalid lists the configurations that every network adapter's Open
// rejects, with the field at fault: no endpoint; an endpoint that is
// empty, has a scheme, lacks its port or host, or has a port that is not
// a number from 1 to 65535; a bad endpoint after the good one ep
// (host:port); a negative dial or request timeout. The adapter's own
// cases, own, follow.
func (cfg NetConfig[C]) Invalid(ep string, own ...InvalidConfig[C]) []InvalidConfig[C] {
	host, port, err := net.SplitHostPort(ep)
	if err != nil {
		panic("storetest: NetConfig.Invalid: " + err.Error())
	}
	endpoints := func(name string, eps ...string) InvalidConfig[C] {
		return InvalidConfig[C]{Name: name, Config: cfg(eps, 0, 0), Field: "Endpoints"}
	}
	return append([]InvalidConfig[C]{
		endpoints("no endpoints"),
		endpoints("empty endpoint", ""),
		endpoints("scheme", "http://"+ep),
		endpoints("no port", host),
		endpoints("bad port", host+":x"),
		endpoints("port 0", host+":0"),
		endpoints("port 65536", host+":65536"),
		endpoints("no host", ":"+port),
		endpoints("one bad of two", ep, "h"),
		{Name: "negative dial timeout", Config: cfg([]string{ep}, -time.Second, 0), Field: "DialTimeout"},
		{Name: "negative request timeout", Config: cfg([]string{ep}, 0, -time.Second), Field: "RequestTimeout"},
	}, own...)
}
