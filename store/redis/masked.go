package redis

import (
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

// configNoMethods is Config without its methods, for the encodings below.
type configNoMethods Config

// masked is c with its secrets masked.
func (c Config) masked() configNoMethods {
	m := configNoMethods(c)
	m.Password = adapter.MaskString(m.Password)
	return m
}

// Format prints c as fmt would (%v, %+v, %#v, %s), its secrets masked.
func (c Config) Format(f fmt.State, verb rune) {
	adapter.FormatMasked(f, verb, c.masked(), "redis.configNoMethods", "redis.Config")
}

// GoString is %#v of c, its secrets masked.
func (c Config) GoString() string { return fmt.Sprintf("%#v", c) }

// MarshalJSON encodes c with its secrets masked.
func (c Config) MarshalJSON() ([]byte, error) { return json.Marshal(c.masked()) }

// LogValue is c for log/slog, its secrets masked.
func (c Config) LogValue() slog.Value { return slog.AnyValue(c.masked()) }
