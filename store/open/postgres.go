//go:build !leadership_no_postgres

package open

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/kvtools/valkeyrie/store"
	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/postgres"
)

// postgresBackend opens PostgreSQL through store/postgres:
// postgres://user:pass@h:5432/db?sslmode=verify-full&sslrootcert=CA[&sslcert=CRT&sslkey=KEY][&table=NAME].
// A password or client key is never sent without verified TLS unless the
// URL says sslmode=disable (a *store.ConfigError for "sslmode")
// (docs/backends.md, PostgreSQL, Secured).
// The build tag leadership_no_postgres leaves it out (see postgres_off.go).
var postgresBackend = backend{name: "postgres", schemes: []string{"postgres", "postgresql"}, open: (*Spec).openPostgres}

// openPostgres hands the URL to pgx as a DSN, less this library's own
// parameters (table, channel, dial_timeout, request_timeout), which go to
// the adapter's Config.
func (s *Spec) openPostgres(ctx context.Context, p *params) (store.Store, error) {
	if len(s.Endpoints) == 0 {
		return nil, &ConfigError{Invalid: storeURL{}, Field: "host", Reason: "no host given"}
	}
	cfg := postgres.Config{Table: p.str("table"), Channel: p.str("channel"),
		DialTimeout: p.duration("dial_timeout"), RequestTimeout: p.duration("request_timeout")}
	if p.err != nil {
		return nil, p.err
	}
	q := url.Values{}
	for k, v := range s.Params {
		if !p.used[k] {
			q[k] = v
		}
	}
	dsn := s.raw
	if i := strings.IndexByte(dsn, '?'); i >= 0 {
		dsn = dsn[:i]
	}
	if enc := q.Encode(); enc != "" {
		dsn += "?" + enc
	}
	cfg.DSN = lstore.Secret(dsn)
	for _, e := range s.Endpoints {
		if err := checkBrackets(e); err != nil {
			return nil, err
		}
	}
	kv, err := postgres.Open(ctx, cfg)
	var ce *ConfigError
	switch {
	case errors.As(err, &ce) && ce.Field == "DSN":
		// postgres says why without the DSN; the URL is not shown either.
		return nil, &ConfigError{Invalid: storeURL{}, Field: "url", Reason: "not a PostgreSQL URL: " + ce.Reason}
	case errors.As(err, &ce) && ce.Field == "sslmode":
		// credentials without verified TLS: the reason names the way out.
		return nil, &ConfigError{Invalid: storeURL{}, Field: ce.Field, Reason: ce.Reason, Err: ce.Err}
	}
	return nonNil(kv, err)
}
