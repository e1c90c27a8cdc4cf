//go:build leadership_no_postgres

package open

// postgresBackend is left out of this build by the tag leadership_no_postgres: its
// schemes are refused with ErrBackendLeftOut, and its adapter and client
// libraries are not linked.
var postgresBackend = backend{name: "postgres", schemes: []string{"postgres", "postgresql"}}
