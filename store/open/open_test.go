package open

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestOpenMemory(t *testing.T) {
	ctx := context.Background()
	a, err := Store(ctx, "memory://open-test")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Store(ctx, "memory:///open-test")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.Put(ctx, "k", []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	if p, err := b.Get(ctx, "k", nil); err != nil || string(p.Value) != "v" {
		t.Fatalf("handles of one name do not share: %v %v", p, err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		url, field string
	}{
		{"memory://", "host"},
		{"memory://x?tls=true", "tls"},
		{"nosuch://h:1", "scheme"},
	} {
		kv, err := Store(ctx, tc.url)
		if errors.Is(err, store.ErrNotReachable) {
			t.Errorf("%s: dialled, and reported unreachable: %v", tc.url, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error shows the password: %v", tc.url, err)
		}
		var ce *ConfigError
		if kv != nil || !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("%s: %v %v, want an error naming %s", tc.url, kv, err, tc.field)
		}
	}
	if _, err := Store(ctx, "nosuch://h:1"); !errors.Is(err, ErrUnknownScheme) {
		t.Errorf("unknown scheme: %v", err)
	}
	t.Setenv("LEADERSHIP_STORE_TEST", "")
	if _, err := FromEnv(ctx, "LEADERSHIP_STORE_TEST"); !errors.Is(err, ErrNoURL) {
		t.Errorf("empty env: %v", err)
	}
	t.Setenv("LEADERSHIP_STORE_TEST", "memory://from-env")
	kv, err := FromEnv(ctx, "LEADERSHIP_STORE_TEST")
	if err != nil {
		t.Fatal(err)
	}
	kv.Close()
}
