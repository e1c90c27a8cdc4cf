package adapter

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

const (
	// DefaultDialTimeout is every network adapter's default dial (or
	// connect) timeout: how long its Open may take to reach the servers.
	DefaultDialTimeout = 5 * time.Second

	// DefaultRequestTimeout is every network adapter's default request
	// timeout: the bound of a call whose context has no deadline.
	DefaultRequestTimeout = 5 * time.Second

	// ProbeKey is the key an adapter's Open reads to check that the
	// servers answer. It need not exist.
	ProbeKey = "leadership-go/open-probe"
)

// Endpoint reports why ep is not a host:port address with a host and
// a port from 1 to 65535 (and no scheme), or nil.
func Endpoint(ep string) error {
	if strings.Contains(ep, "://") {
		return errors.New("want host:port without a scheme")
	}
	host, port, err := net.SplitHostPort(ep)
	if err != nil {
		return err
	}
	if host == "" {
		return errors.New("empty host")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("bad port %q", port)
	}
	return nil
}

// Timeout is one duration field of a Config, with its default.
type Timeout struct {
	Field   string
	Value   *time.Duration
	Default time.Duration
}

// Timeouts gives each zero timeout its default. A negative one is
// refused: its field and the reason are returned, and field is "" when
// every timeout is fine.
func Timeouts(ts ...Timeout) (field, reason string) {
	for _, t := range ts {
		switch {
		case *t.Value < 0:
			return t.Field, fmt.Sprintf("negative: %v", *t.Value)
		case *t.Value == 0:
			*t.Value = t.Default
		}
	}
	return "", ""
}

// CheckEndpoints returns a *ConfigError for field "Endpoints", matching
// invalid, unless eps holds at least one endpoint, at most most (0: any
// number; tooMany then says why no more), each a host:port address.
func CheckEndpoints(invalid error, eps []string, most int, tooMany string) error {
	if len(eps) == 0 {
		return &ConfigError{Invalid: invalid, Field: "Endpoints", Reason: "no endpoint given"}
	}
	if most > 0 && len(eps) > most {
		return &ConfigError{Invalid: invalid, Field: "Endpoints", Reason: fmt.Sprintf("%d endpoints: %s", len(eps), tooMany)}
	}
	for _, ep := range eps {
		if err := Endpoint(ep); err != nil {
			return &ConfigError{Invalid: invalid, Field: "Endpoints", Value: ep, Reason: "want host:port", Err: err}
		}
	}
	return nil
}

// CheckTimeouts is Timeouts, with a *ConfigError matching invalid for a
// negative timeout.
func CheckTimeouts(invalid error, ts ...Timeout) error {
	if field, reason := Timeouts(ts...); field != "" {
		return &ConfigError{Invalid: invalid, Field: field, Reason: reason}
	}
	return nil
}

// CheckDialRequest is CheckTimeouts of the two timeouts every network
// adapter's Config has, DialTimeout (dial, default DefaultDialTimeout) and
// RequestTimeout (request, default DefaultRequestTimeout).
func CheckDialRequest(invalid error, dial, request *time.Duration) error {
	return CheckTimeouts(invalid,
		Timeout{Field: "DialTimeout", Value: dial, Default: DefaultDialTimeout},
		Timeout{Field: "RequestTimeout", Value: request, Default: DefaultRequestTimeout},
	)
}

// CheckNetwork checks what the Config of every network adapter with a
// list of endpoints has: the endpoints (CheckEndpoints with most and
// tooMany), which it then replaces by a copy so that the store keeps none
// of the caller's slice, and DialTimeout and RequestTimeout
// (CheckDialRequest, which fills in their defaults).
func CheckNetwork(invalid error, eps *[]string, most int, tooMany string, dial, request *time.Duration) error {
	if err := CheckEndpoints(invalid, *eps, most, tooMany); err != nil {
		return err
	}
	*eps = append([]string(nil), *eps...)
	return CheckDialRequest(invalid, dial, request)
}
