package kubernetes

import (
	"encoding/base32"
	"fmt"
	"strings"
)

// The mapping between election keys and Lease names (see the package
// documentation, "Keys and Lease names"). It is one to one: leaseName and
// keyOf are inverse on every key leaseName accepts.

// encodedPrefix starts the name of every key that is not written as it is.
// A name that starts with it never comes from the readable form, which
// refuses keys whose first label starts so.
const encodedPrefix = "x--"

// maxName is the longest Lease name the API server accepts (a DNS-1123
// subdomain).
const maxName = 253

// nameEncoding is base32 with the "extended hex" alphabet, lower case and
// without padding: its digits are 0-9 and a-v, all valid in a DNS label.
var nameEncoding = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

// maxEncodedKey is the longest key, in bytes, that leaseName accepts when
// it is not in the readable form (a readable key may have up to 253).
const maxEncodedKey = (maxName - len(encodedPrefix)) * 5 / 8

// leaseName returns the name of the Lease that holds key. Surrounding
// slashes are trimmed first (the election engine does the same, so that
// "a/b", "/a/b" and "a/b/" name one election). A key whose '/'-separated
// parts are all DNS labels (lower-case letters, digits and '-', starting
// and ending with a letter or digit) and whose first part does not start
// with "x--" is written as it is, with '/' as '.': "service/leader" is
// the Lease "service.leader". Any other key is written as "x--" and the
// key's bytes in lower-case base32 (alphabet 0-9a-v, no padding):
// "App/Leader" is "x--85o70bqcclgm8pbi". An empty key, or a key whose name
// would be longer than 253 characters, is refused with an error matching
// errInvalidKey.
func leaseName(key string) (string, error) {
	k := strings.Trim(key, "/")
	if k == "" {
		return "", fmt.Errorf("%w: %q: empty", errInvalidKey, key)
	}
	if readable(k) {
		if len(k) > maxName {
			return "", fmt.Errorf("%w: %q: longer than %d characters", errInvalidKey, key, maxName)
		}
		return strings.ReplaceAll(k, "/", "."), nil
	}
	if len(k) > maxEncodedKey {
		return "", fmt.Errorf("%w: %q: %d bytes, more than the %d a key outside the readable form may have (its Lease name would exceed %d characters)",
			errInvalidKey, key, len(k), maxEncodedKey, maxName)
	}
	return encodedPrefix + nameEncoding.EncodeToString([]byte(k)), nil
}

// keyOf returns the key whose Lease is name: the inverse of leaseName. It
// reports false for a name leaseName never gives (one that starts with
// "x--" and is not base32 of a key in the encoded form, or that is not a
// DNS-1123 subdomain).
func keyOf(name string) (string, bool) {
	if rest, ok := strings.CutPrefix(name, encodedPrefix); ok {
		b, err := nameEncoding.DecodeString(rest)
		if err != nil {
			return "", false
		}
		k := string(b)
		if n, err := leaseName(k); err != nil || n != name || k != strings.Trim(k, "/") {
			return "", false
		}
		return k, true
	}
	k := strings.ReplaceAll(name, ".", "/")
	if k == "" || !readable(k) || len(k) > maxName {
		return "", false
	}
	return k, true
}

// readable reports whether every '/'-separated part of k is a DNS label
// and the first does not start with the encoded form's prefix.
func readable(k string) bool {
	if strings.HasPrefix(k, encodedPrefix) {
		return false
	}
	for part := range strings.SplitSeq(k, "/") {
		if !isLabel(part) {
			return false
		}
	}
	return true
}

// isLabel reports whether s is a DNS-1123 label without its length limit:
// lower-case letters, digits and '-', starting and ending with a letter or
// digit.
func isLabel(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(s)-1:
		default:
			return false
		}
	}
	return true
}
