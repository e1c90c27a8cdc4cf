package demo

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/leadership-go/leadership"
)

// Defaults and limits of a demo's settings.
const (
	DefaultCandidates = 3
	DefaultTTL        = 2 * time.Second
	DefaultKey        = "demo/leader"
	MinCandidates     = 2
	MaxCandidates     = 50
	MinTTL            = 100 * time.Millisecond
	MaxTTL            = time.Minute
)

// Proxy is an HTTP handler that forwards each request to the leader of the
// election, as "leadership proxy" does. Close drops its connections.
type Proxy interface {
	http.Handler
	Close()
}

// Config is what one run of the demo does.
type Config struct {
	Candidates int           // how many candidates, MinCandidates to MaxCandidates
	TTL        time.Duration // every candidate's lease, MinTTL to MaxTTL
	Key        string        // the election's key in the store

	// NewProxy returns the proxy that requests go through; current is the
	// demo's follower's view of the leader (its Current method). Run closes
	// the proxy when it ends.
	NewProxy func(current func() leadership.Status) Proxy
}

// Validate checks the settings and returns a *ConfigError naming the first
// bad one.
func (c Config) Validate() error {
	switch {
	case c.Candidates < MinCandidates || c.Candidates > MaxCandidates:
		return &ConfigError{Field: "candidates", Value: strconv.Itoa(c.Candidates),
			Reason: "must be between " + strconv.Itoa(MinCandidates) + " and " + strconv.Itoa(MaxCandidates)}
	case c.TTL < MinTTL || c.TTL > MaxTTL:
		return &ConfigError{Field: "ttl", Value: ShortDuration(c.TTL),
			Reason: "must be between " + ShortDuration(MinTTL) + " and " + ShortDuration(MaxTTL)}
	case strings.Trim(c.Key, "/") == "":
		return &ConfigError{Field: "key", Value: strconv.Quote(c.Key), Reason: "must name a key"}
	case c.NewProxy == nil:
		return &ConfigError{Field: "proxy", Value: "nil", Reason: "NewProxy must be set"}
	}
	return nil
}
