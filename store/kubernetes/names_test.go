package kubernetes

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	lstore "github.com/leadership-go/leadership/store"
)

func TestLeaseNameReadable(t *testing.T) {
	for key, want := range map[string]string{
		"service/leader":      "service.leader",
		"/service/leader/":    "service.leader",
		"a":                   "a",
		"kube-controller-mgr": "kube-controller-mgr",
		"a-b/0/c9":            "a-b.0.c9",
	} {
		got, err := leaseName(key)
		if err != nil || got != want {
			t.Errorf("leaseName(%q) = %q, %v; want %q", key, got, err, want)
		}
	}
}

func TestLeaseNameEncoded(t *testing.T) {
	if name, _ := leaseName("App/Leader"); name != "x--85o70bqcclgm8pbi" {
		t.Errorf("leaseName(App/Leader) = %q, not the documented x--85o70bqcclgm8pbi", name)
	}
	for _, key := range []string{
		"App/Leader", "a.b", "a//b", "-a", "a-/b", "x--a", "x--a/b", "under_score",
		"leadershiptest/FirstElection/1764284400000000000", "é", "a\x00b",
		strings.Repeat("A", maxEncodedKey),
	} {
		name, err := leaseName(key)
		if err != nil {
			t.Errorf("leaseName(%q): %v", key, err)
			continue
		}
		if !strings.HasPrefix(name, encodedPrefix) {
			t.Errorf("leaseName(%q) = %q, want the encoded form", key, name)
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			t.Errorf("leaseName(%q) = %q: not a valid name: %v", key, name, errs)
		}
		back, ok := keyOf(name)
		if !ok || back != key {
			t.Errorf("keyOf(%q) = %q, %v; want %q", name, back, ok, key)
		}
	}
}

func TestLeaseNameRefused(t *testing.T) {
	for _, key := range []string{"", "/", "//", strings.Repeat("A", maxEncodedKey+1), strings.Repeat("a", 254)} {
		if name, err := leaseName(key); !errors.Is(err, lstore.ErrInvalidKey) {
			t.Errorf("leaseName(%q) = %q, %v; want lstore.ErrInvalidKey", key, name, err)
		}
	}
	if _, err := leaseName(strings.Repeat("a", 253)); err != nil {
		t.Errorf("a readable key of 253 characters: %v", err)
	}
}

// The mapping is one to one: distinct keys (after trimming slashes) give
// distinct names, and keyOf inverts leaseName.
func TestLeaseNameOneToOne(t *testing.T) {
	alphabet := []string{"a", "A", "0", "-", ".", "/", "_", "x"}
	seen := map[string]string{}
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		if n == 0 {
			k := strings.Trim(prefix, "/")
			if k == "" {
				return
			}
			name, err := leaseName(k)
			if err != nil {
				t.Fatalf("leaseName(%q): %v", k, err)
			}
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				t.Fatalf("leaseName(%q) = %q: %v", k, name, errs)
			}
			if other, dup := seen[name]; dup && other != k {
				t.Fatalf("%q and %q both map to %q", other, k, name)
			}
			seen[name] = k
			if back, ok := keyOf(name); !ok || back != k {
				t.Fatalf("keyOf(leaseName(%q)) = %q, %v", k, back, ok)
			}
			return
		}
		for _, c := range alphabet {
			gen(prefix+c, n-1)
		}
		gen(prefix, 0)
	}
	gen("", 4)
	if len(seen) < 1000 {
		t.Fatalf("only %d keys tried", len(seen))
	}
}

func TestKeyOfForeignNames(t *testing.T) {
	for name, want := range map[string]string{
		"kube-controller-manager": "kube-controller-manager",
		"my.app.lock":             "my/app/lock",
	} {
		if got, ok := keyOf(name); !ok || got != want {
			t.Errorf("keyOf(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	for _, name := range []string{"x--", "x--zz", "x--" + nameEncoding.EncodeToString([]byte("abc")), "Upper"} {
		if got, ok := keyOf(name); ok {
			t.Errorf("keyOf(%q) = %q, want no key", name, got)
		}
	}
}
