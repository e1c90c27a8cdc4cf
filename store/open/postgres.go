//go:build !leadership_no_postgres

package open

import (
	"context"
	"errors"
	"strings"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/postgres"
)

// postgresBackend opens PostgreSQL through store/postgres:
// postgres://user:pass@h:5432/db?sslmode=verify-full&sslrootcert=CA[&sslcert=CRT&sslkey=KEY][&table=NAME].
// A password or client key is never sent without verified TLS unless the
// URL says sslmode=disable (postgres.ErrInsecure)
// (docs/backends.md, PostgreSQL, Secured).
// The build tag leadership_no_postgres leaves it out (see postgres_off.go).
var postgresBackend = backend{name: "postgres", schemes: []string{"postgres", "postgresql"}, open: (*Spec).openPostgres}

// openPostgres hands the URL to pgx as a DSN, less this library's own
// parameters (table, channel).
func (s *Spec) openPostgres(ctx context.Context, _ *params) (store.Store, error) {
	if len(s.Endpoints) == 0 {
		return nil, &ConfigError{Invalid: storeURL{}, Field: "host", Reason: "no host given"}
	}
	cfg := postgres.Config{Table: s.Params.Get("table"), Channel: s.Params.Get("channel")}
	q := s.Params
	q.Del("table")
	q.Del("channel")
	dsn := s.raw
	if i := strings.IndexByte(dsn, '?'); i >= 0 {
		dsn = dsn[:i]
	}
	if enc := q.Encode(); enc != "" {
		dsn += "?" + enc
	}
	cfg.DSN = dsn
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
	case errors.Is(err, postgres.ErrInsecure) && errors.As(err, &ce):
		return nil, &ConfigError{Invalid: storeURL{}, Field: ce.Field, Reason: ce.Reason, Err: postgres.ErrInsecure}
	}
	return nonNil(kv, err)
}
