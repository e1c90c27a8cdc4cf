package open

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/memory"
)

// registerRuns makes each run of TestRegister (go test -count=N) register
// schemes of its own: a registered scheme stays for the process.
var registerRuns atomic.Int64

// TestRegister checks that a registered backend gets its URLs as given
// (trimmed), that its errors and stores come back unchanged, that no store
// and no error is an error, and that Register refuses a taken, built-in,
// malformed or repeated scheme.
func TestRegister(t *testing.T) {
	n := registerRuns.Add(1)
	a, b := fmt.Sprintf("test-reg%d", n), fmt.Sprintf("test-reg%d.b", n)
	errTest := errors.New("test opener")
	var got []string
	Register([]string{strings.ToUpper(a), b}, func(_ context.Context, raw string) (store.Store, error) {
		got = append(got, raw)
		switch {
		case strings.Contains(raw, "fail"):
			return nil, errTest
		case strings.Contains(raw, "nilnil"):
			return nil, nil
		case strings.Contains(raw, "typednil"):
			var m *memory.Store
			return m, nil
		}
		return Store(context.Background(), "memory://register-test")
	})
	ctx := context.Background()
	kv, err := Store(ctx, " "+strings.ToUpper(a)+"://x,y/p?q=1 ")
	if err != nil {
		t.Fatal(err)
	}
	kv.Close()
	if _, err := Store(ctx, b+"://fail"); !errors.Is(err, errTest) {
		t.Fatalf("the opener's error: got %v", err)
	}
	for _, u := range []string{b + "://nilnil", b + "://typednil"} {
		if kv, err := Store(ctx, u); kv != nil || err == nil {
			t.Errorf("%s: %v, %v; want an error", u, kv, err)
		}
	}
	if want := []string{strings.ToUpper(a) + "://x,y/p?q=1", b + "://fail", b + "://nilnil", b + "://typednil"}; !slices.Equal(got, want) {
		t.Fatalf("the opener got %q, want %q", got, want)
	}
	if !slices.Contains(Schemes, a) || !slices.Contains(Schemes, b) {
		t.Fatalf("Schemes %v lacks the registered schemes", Schemes)
	}
	for _, schemes := range [][]string{{a}, {"memory"}, {""}, nil, {"x y"}, {"1x"}, {"x:"}, {"dup", "DUP"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", schemes)
				}
			}()
			Register(schemes, func(context.Context, string) (store.Store, error) { return nil, nil })
		}()
	}
}

// TestRegisterFillsPlaceholder checks that registering a backend known
// here only by name (as etcd is until store/etcd is imported) under any of its schemes makes all of them open with it.
func TestRegisterFillsPlaceholder(t *testing.T) {
	n := registerRuns.Add(1)
	own, alias := fmt.Sprintf("ph%d", n), fmt.Sprintf("ph%d-alias", n)
	registry.Lock()
	saved := slices.Clone(backends)
	backends = append(backends, &backend{name: "placeholder", schemes: []string{own}, hint: "import it"})
	registry.Unlock()
	t.Cleanup(func() {
		registry.Lock()
		backends = saved
		Schemes = builtInSchemes()
		registry.Unlock()
	})
	ctx := context.Background()
	if _, err := Store(ctx, own+"://x"); !errors.Is(err, ErrBackendLeftOut) || !strings.Contains(err.Error(), "import it") {
		t.Fatalf("before Register: %v, want ErrBackendLeftOut saying what to import", err)
	}
	Register([]string{alias, own}, func(context.Context, string) (store.Store, error) {
		return Store(context.Background(), "memory://register-placeholder")
	})
	for _, u := range []string{own + "://x", alias + "://x"} {
		kv, err := Store(ctx, u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		kv.Close()
	}
	seen := map[string]int{}
	for _, b := range backends {
		for _, s := range b.schemes {
			seen[s]++
		}
	}
	if seen[own] != 1 || seen[alias] != 1 {
		t.Fatalf("schemes named by backends: %v", seen)
	}
}

// TestRegisterAdapter checks that RegisterAdapter's Opener hands the
// Spec to config, refuses a parameter config did not read before open
// runs, returns config's errors as they are, and opens with config's
// Config.
func TestRegisterAdapter(t *testing.T) {
	scheme := fmt.Sprintf("test-adapter%d", registerRuns.Add(1))
	errConfig := errors.New("test config")
	var opened []string
	RegisterAdapter([]string{scheme}, func(s *Spec) (string, error) {
		if s.Param("fail") != "" {
			return "", errConfig
		}
		return s.Param("name"), nil
	}, func(_ context.Context, name string) (*memory.Store, error) {
		opened = append(opened, name)
		return memory.Open(context.Background(), memory.Config{Name: name})
	})
	ctx := context.Background()
	kv, err := Store(ctx, scheme+"://h?name=register-adapter")
	if err != nil {
		t.Fatal(err)
	}
	kv.Close()
	if _, err := Store(ctx, scheme+"://h?fail=1"); !errors.Is(err, errConfig) {
		t.Errorf("config's error: got %v", err)
	}
	var ce *ConfigError
	if _, err := Store(ctx, scheme+"://h?name=x&extra=1"); !errors.As(err, &ce) || ce.Field != "extra" {
		t.Errorf("a parameter config did not read: %v, want a *ConfigError naming it", err)
	}
	if want := []string{"register-adapter"}; !slices.Equal(opened, want) {
		t.Errorf("opened %q, want %q", opened, want)
	}
}
