// Package check holds the checks that the backends' Config types share:
// endpoint addresses, and timeouts that take a default when zero.
package check

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
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
