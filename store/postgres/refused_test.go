package postgres

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/kvtools/valkeyrie/store"
)

// Refusals are typed, one line, and never match ErrNotReachable; the
// password is masked wherever the driver's message holds it.
func TestRefusedErrors(t *testing.T) {
	cc, err := pgconn.ParseConfig("postgres://u:s3cret-pw@127.0.0.1:1/db?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		code string
		want error
	}{
		{"42501", errPermission},
		{"28P01", errAuth},
		{"28000", errAuth},
	} {
		drv := &pgconn.PgError{Code: tc.code, Message: "refused s3cret-pw"}
		kind, _ := refusal(drv, nil)
		if kind != tc.want {
			t.Errorf("%s: kind %v, want %v", tc.code, kind, tc.want)
		}
		err := &RefusedError{Op: "connect", Kind: kind, Err: mask(drv, cc.Password)}
		if !errors.Is(err, tc.want) || errors.Is(err, store.ErrNotReachable) {
			t.Errorf("%s: %v matches %v: %v, ErrNotReachable: %v", tc.code, err, tc.want, errors.Is(err, tc.want), errors.Is(err, store.ErrNotReachable))
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != tc.code {
			t.Errorf("%s: the driver's error is not reachable: %v", tc.code, err)
		}
		if strings.Contains(err.Error(), "s3cret-pw") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %q shows the password or takes more than a line", tc.code, err)
		}
	}
	if kind, _ := refusal(&pgconn.PgError{Code: "23505"}, nil); kind != nil {
		t.Errorf("a unique violation is a %v refusal", kind)
	}
}
