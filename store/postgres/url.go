package postgres

import (
	"errors"
	"strings"

	lstore "github.com/leadership-go/leadership/store"
	openurl "github.com/leadership-go/leadership/store/open"
)

// Importing the package registers postgres:// and postgresql:// with
// store/open.
func init() { openurl.RegisterAdapter([]string{"postgres", "postgresql"}, urlConfig, Open) }

// urlParams are the URL's parameters for this library, by the Config field
// they set.
var urlParams = map[string]string{"Table": "table", "Channel": "channel", "DialTimeout": "dial_timeout", "RequestTimeout": "request_timeout"}

// urlConfig reads PostgreSQL:
// postgres://user:pass@h:5432/db?sslmode=verify-full&sslrootcert=CA[&sslcert=CRT&sslkey=KEY][&table=NAME].
// The URL is the DSN handed to pgx, less this library's own parameters
// (table, channel, dial_timeout, request_timeout), which go to the Config.
// A password or client key is never sent without verified TLS unless the
// URL says sslmode=disable (a *store.ConfigError for "sslmode").
func urlConfig(s *openurl.Spec) (Config, error) {
	if len(s.Endpoints) == 0 {
		return Config{}, s.Invalid("host", "", "no host given", nil)
	}
	// pgx takes hosts that HostPorts refuses (a socket directory, %2F...);
	// an IPv6 address in brackets is checked, unbalanced brackets refused.
	if strings.ContainsAny(strings.Join(s.Endpoints, ","), "[]") {
		if _, err := s.HostPorts("5432"); err != nil {
			return Config{}, err
		}
	}
	cfg := Config{Table: s.Param("table"), Channel: s.Param("channel"),
		DialTimeout: s.Duration("dial_timeout"), RequestTimeout: s.Duration("request_timeout")}
	dsn := s.DSN() // the other parameters are pgx's
	if err := s.Check(); err != nil {
		return Config{}, err
	}
	cfg.DSN = lstore.Secret(dsn)
	// The DSN is checked here, as Open would, so that its mistakes are the
	// URL's (matching open.ErrInvalidURL).
	st, err := cfg.resolve()
	if err == nil {
		_, err = cfg.poolConfig(dsn, &st)
	}
	var ce *lstore.ConfigError
	switch {
	case errors.As(err, &ce) && ce.Field == "DSN":
		// Open says why without the DSN; the URL is not shown either.
		return Config{}, s.Invalid("url", "", "not a PostgreSQL URL: "+ce.Reason, nil)
	case errors.As(err, &ce) && ce.Field == "sslmode":
		// credentials without verified TLS: the reason names the way out.
		return Config{}, s.Invalid(ce.Field, "", ce.Reason, ce.Err)
	case errors.As(err, &ce) && urlParams[ce.Field] != "":
		// a parameter of this library's that Config refuses (?table=bad-name).
		return Config{}, s.Invalid(urlParams[ce.Field], "", ce.Reason, ce.Err)
	case err != nil:
		return Config{}, err
	}
	return cfg, nil
}
