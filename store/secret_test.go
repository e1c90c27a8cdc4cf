package store_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/leadership-go/leadership/store"
)

// A Secret in a struct is masked by fmt (every verb), encoding/json and
// log/slog (text and JSON), set or not, by value or by pointer.
func TestSecretMasked(t *testing.T) {
	type config struct {
		User     string
		Password store.Secret
	}
	const secret = "s3cr3t-value"
	for _, v := range []any{config{User: "u", Password: secret}, &config{User: "u", Password: secret}, store.Secret(secret)} {
		var shown []string
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
			shown = append(shown, fmt.Sprintf(verb, v))
		}
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		shown = append(shown, string(j))
		for _, h := range []func(*bytes.Buffer) slog.Handler{
			func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
			func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
		} {
			var b bytes.Buffer
			slog.New(h(&b)).Info("cfg", "cfg", v)
			shown = append(shown, b.String())
		}
		for _, s := range shown {
			if strings.Contains(s, secret) || strings.Contains(s, fmt.Sprintf("%x", secret)) {
				t.Errorf("the secret shows: %s", s)
			}
		}
	}
	if got := fmt.Sprintf("%#v", store.Secret(secret)); got != `"xxxxx"` {
		t.Errorf("%%#v = %s, want \"xxxxx\"", got)
	}
	if got := fmt.Sprint(store.Secret("")); got != "" {
		t.Errorf("an empty secret shows as %q, want \"\"", got)
	}
	if got := string(store.Secret(secret)); got != secret {
		t.Errorf("string(s) = %q, want the value", got)
	}
}
