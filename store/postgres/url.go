package postgres

import (
	"context"
	"errors"
	"strings"

	"github.com/kvtools/valkeyrie/store"
	lstore "github.com/leadership-go/leadership/store"
	openurl "github.com/leadership-go/leadership/store/open"
)

// Importing the package registers postgres:// and postgresql:// with
// store/open.
func init() { openurl.Register([]string{"postgres", "postgresql"}, openURL) }

// openURL opens PostgreSQL:
// postgres://user:pass@h:5432/db?sslmode=verify-full&sslrootcert=CA[&sslcert=CRT&sslkey=KEY][&table=NAME].
// It hands the URL to pgx as a DSN, less this library's own parameters
// (table, channel, dial_timeout, request_timeout), which go to the Config.
// A password or client key is never sent without verified TLS unless the
// URL says sslmode=disable (a *store.ConfigError for "sslmode").
func openURL(ctx context.Context, raw string) (store.Store, error) {
	s, err := openurl.Parse(raw)
	if err != nil {
		return nil, err
	}
	if len(s.Endpoints) == 0 {
		return nil, s.Invalid("host", "", "no host given", nil)
	}
	// pgx takes hosts that HostPorts refuses (a socket directory, %2F...);
	// an IPv6 address in brackets is checked, unbalanced brackets refused.
	if strings.ContainsAny(strings.Join(s.Endpoints, ","), "[]") {
		if _, err := s.HostPorts("5432"); err != nil {
			return nil, err
		}
	}
	cfg := Config{Table: s.Param("table"), Channel: s.Param("channel"),
		DialTimeout: s.Duration("dial_timeout"), RequestTimeout: s.Duration("request_timeout")}
	rest := s.Unread()
	for k := range rest {
		s.Param(k) // pgx's, handed on below
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	dsn := strings.TrimSpace(raw)
	if i := strings.IndexByte(dsn, '?'); i >= 0 {
		dsn = dsn[:i]
	}
	if enc := rest.Encode(); enc != "" {
		dsn += "?" + enc
	}
	cfg.DSN = lstore.Secret(dsn)
	kv, err := Open(ctx, cfg)
	var ce *lstore.ConfigError
	switch {
	case errors.As(err, &ce) && ce.Field == "DSN":
		// Open says why without the DSN; the URL is not shown either.
		return nil, s.Invalid("url", "", "not a PostgreSQL URL: "+ce.Reason, nil)
	case errors.As(err, &ce) && ce.Field == "sslmode":
		// credentials without verified TLS: the reason names the way out.
		return nil, s.Invalid(ce.Field, "", ce.Reason, ce.Err)
	case err != nil:
		return nil, err
	}
	return kv, nil
}
