// Package health serves the health checks of leadership's candidates and
// followers over HTTP, as client-go's HealthzAdaptor does for its leader
// election: a probe fails when the engine has stopped making progress.
package health

import (
	"net/http"
)

// Handler serves check: 200 and "ok" while it returns nil, 503 and the
// error's text otherwise. check is called once per request; use it with
// Candidate.Health or Follower.Health:
//
//	http.Handle("/healthz", health.Handler(func() error { return c.Health(30 * time.Second) }))
func Handler(check func() error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := check(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(err.Error() + "\n"))
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
}
