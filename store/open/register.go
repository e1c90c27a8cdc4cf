package open

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/kvtools/valkeyrie/store"
)

// Opener opens the store a URL names, for Register: it gets the URL as
// given, without surrounding spaces, scheme included, and parses it
// itself. An error about the URL's form, its parameters or the
// configuration they name should match ErrInvalidURL, as this package's
// own do.
type Opener func(ctx context.Context, rawURL string) (store.Store, error)

// registry guards backends and Schemes against Register.
var registry sync.RWMutex

// Register makes Store, FromEnv and Spec.Open open URLs of the given
// schemes with open: it is how a backend of another module joins them,
// as every network adapter (store/etcd, store/redis, ...) does for its
// schemes when a program imports it, the way database/sql drivers
// register. An Opener parses the URL with Parse and reads its parameters
// with the Spec's HostPorts, Param, Duration and TLS, then Check. Call it
// from an init function: Schemes, a plain variable,
// shows the new schemes to code that reads it afterwards. Schemes are
// matched in lower case and must be a letter followed by letters, digits,
// "+", "-" or "." (RFC 3986). Register panics when open is nil, when a
// scheme is malformed or given twice, or when one is taken: registered
// already, or naming the embedded store (memory). A store opened by open that is nil with a
// nil error is reported as an error.
func Register(schemes []string, open Opener) {
	if open == nil || len(schemes) == 0 {
		panic("open: Register needs schemes and an Opener")
	}
	registry.Lock()
	defer registry.Unlock()
	b := &backend{}
	var placeholder *backend
	for _, s := range schemes {
		s = strings.ToLower(s)
		if !validScheme(s) {
			panic(fmt.Sprintf("open: Register: malformed scheme %q", s))
		}
		if slices.Contains(b.schemes, s) {
			panic(fmt.Sprintf("open: Register: scheme %q given twice", s))
		}
		switch old := backendForLocked(s); {
		case old == nil:
		case old.open != nil:
			panic(fmt.Sprintf("open: Register: scheme %q is already taken", s))
		case old.hint == "":
			panic(fmt.Sprintf("open: Register: scheme %q names the built-in backend %s", s, old.name))
		default:
			placeholder = old // the entry of an external backend, to fill in
		}
		b.schemes = append(b.schemes, s)
	}
	b.name = b.schemes[0]
	b.open = func(s *Spec, ctx context.Context) (store.Store, error) {
		kv, err := open(ctx, strings.TrimSpace(s.raw))
		if err == nil && isNil(kv) {
			return nil, fmt.Errorf("open: the %s backend's Opener returned no store and no error", s.Scheme)
		}
		return nonNil(kv, err)
	}
	if placeholder != nil {
		// The placeholder's schemes are the backend's: they open with it.
		b.name, b.hint = placeholder.name, placeholder.hint
		for _, s := range placeholder.schemes {
			if !slices.Contains(b.schemes, s) {
				b.schemes = append(b.schemes, s)
			}
		}
		for i, old := range backends {
			if old == placeholder {
				backends[i] = b
			}
		}
	} else {
		backends = append(backends, b)
	}
	Schemes = builtInSchemes()
}

// RegisterAdapter registers schemes (see Register) for a network adapter
// whose URLs Parse reads: its Opener parses the URL, has config read the
// Spec into the adapter's Config (HostPorts, Param, Duration, TLS, and a
// *ConfigError from Invalid for what it refuses), checks that every
// parameter was read and well formed (Check), and only then, before any
// network activity, opens the store with open (the adapter's Open).
func RegisterAdapter[C any, S store.Store](schemes []string, config func(*Spec) (C, error), open func(context.Context, C) (S, error)) {
	if config == nil || open == nil {
		panic("open: RegisterAdapter needs a config and an open function")
	}
	Register(schemes, func(ctx context.Context, rawURL string) (store.Store, error) {
		s, err := Parse(rawURL)
		if err != nil {
			return nil, err
		}
		cfg, err := config(s)
		if err != nil {
			return nil, err
		}
		if err := s.Check(); err != nil {
			return nil, err
		}
		kv, err := open(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return kv, nil
	})
}

// validScheme reports whether s is a URL scheme (RFC 3986, lower case).
func validScheme(s string) bool {
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// isNil reports whether kv is nil or a nil pointer (map, func...) in an
// interface.
func isNil(kv store.Store) bool {
	if kv == nil {
		return true
	}
	switch v := reflect.ValueOf(kv); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}
