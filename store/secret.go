package store

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
)

// mask replaces a secret wherever one would be shown.
const mask = "xxxxx"

// Secret is a credential of an adapter's Config (a password, a token, a
// DSN that may hold one): the one type that masks secrets. fmt (every
// verb), encoding/json and log/slog show a set Secret as "xxxxx" and an
// empty one as "", so a Config printed, encoded or logged never shows a
// credential; string(s) is the value itself.
type Secret string

// shown is s as it is shown: "xxxxx" when set, "" when not.
func (s Secret) shown() string {
	if s == "" {
		return ""
	}
	return mask
}

// String is "xxxxx" for a set secret, "" for an empty one.
func (s Secret) String() string { return s.shown() }

// Format prints the masked secret under any verb: quoted for %q and %#v.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'q' || verb == 'v' && f.Flag('#') {
		_, _ = fmt.Fprintf(f, "%q", s.shown())
		return
	}
	_, _ = io.WriteString(f, s.shown())
}

// GoString is %#v of the masked secret, a quoted string.
func (s Secret) GoString() string { return fmt.Sprintf("%q", s.shown()) }

// MarshalJSON encodes the masked secret as a JSON string.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.shown()) }

// LogValue is the masked secret for log/slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.shown()) }
