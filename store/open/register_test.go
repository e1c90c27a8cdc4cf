package open

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kvtools/valkeyrie/store"
)

// TestKubernetesNeedsItsImport checks that a k8s:// URL, in a program
// that did not import store/kubernetes/register, says what to import.
func TestKubernetesNeedsItsImport(t *testing.T) {
	kv, err := Store(context.Background(), "k8s://default")
	var ce *ConfigError
	switch {
	case kv != nil:
		t.Fatal("opened a store")
	case !errors.Is(err, ErrBackendLeftOut) || !errors.Is(err, ErrUnknownScheme) || !errors.Is(err, ErrInvalidURL):
		t.Fatalf("%v, want ErrBackendLeftOut, ErrUnknownScheme and ErrInvalidURL", err)
	case !errors.As(err, &ce) || ce.Field != "scheme" || !strings.Contains(err.Error(), "store/kubernetes/register"):
		t.Fatalf("%v, want a scheme error naming store/kubernetes/register", err)
	case slices.Contains(Schemes, "k8s"):
		t.Fatalf("Schemes %v lists k8s, which this program cannot open", Schemes)
	}
}

// TestRegister checks that a registered backend gets its URLs as given,
// that its errors and stores come back unchanged, and that Register
// refuses a taken or built-in scheme.
func TestRegister(t *testing.T) {
	errTest := errors.New("test opener")
	var got []string
	Register([]string{"Test-Reg", "test-reg2"}, func(_ context.Context, raw string) (store.Store, error) {
		got = append(got, raw)
		if strings.Contains(raw, "fail") {
			return nil, errTest
		}
		return Store(context.Background(), "memory://register-test")
	})
	ctx := context.Background()
	kv, err := Store(ctx, "TEST-REG://a,b/p?x=1")
	if err != nil {
		t.Fatal(err)
	}
	kv.Close()
	if _, err := Store(ctx, "test-reg2://fail"); !errors.Is(err, errTest) {
		t.Fatalf("the opener's error: got %v", err)
	}
	if want := []string{"TEST-REG://a,b/p?x=1", "test-reg2://fail"}; !slices.Equal(got, want) {
		t.Fatalf("the opener got %q, want %q", got, want)
	}
	if !slices.Contains(Schemes, "test-reg") || !slices.Contains(Schemes, "test-reg2") {
		t.Fatalf("Schemes %v lacks the registered schemes", Schemes)
	}
	for _, schemes := range [][]string{{"test-reg"}, {"etcd"}, {"memory"}, {""}, nil} {
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
