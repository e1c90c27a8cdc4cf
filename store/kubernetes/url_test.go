package kubernetes

import (
	"errors"
	"testing"
	"time"

	lstore "github.com/leadership-go/leadership/store"
)

func TestParseURL(t *testing.T) {
	for raw, want := range map[string]Config{
		"k8s://prod": {Namespace: "prod"},
		"k8s://":     {},
		"k8s:///":    {},
		"k8s://team-a?kubeconfig=/etc/kube/config&context=ci": {Namespace: "team-a", Kubeconfig: "/etc/kube/config", Context: "ci"},
		"k8s://x?dial_timeout=2s&request_timeout=3s":          {Namespace: "x", DialTimeout: 2 * time.Second, RequestTimeout: 3 * time.Second},
	} {
		got, err := parseURL(raw)
		if err != nil || got != want {
			t.Errorf("parseURL(%q) = %+v, %v; want %+v", raw, got, err, want)
		}
	}
	for _, raw := range []string{
		"etcd://prod", "k8s://Prod", "k8s://prod/key", "k8s://prod:443", "k8s://u:p@prod",
		"k8s://prod?foo=1", "k8s://prod?context=a&context=b", "k8s://prod?dial_timeout=x",
		"k8s://prod?request_timeout=-1s", "k8s:prod", "k8s://a_b",
	} {
		if _, err := parseURL(raw); !errors.Is(err, lstore.ErrInvalidConfig) {
			t.Errorf("parseURL(%q): %v, want lstore.ErrInvalidConfig", raw, err)
		}
	}
}
