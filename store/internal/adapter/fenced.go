package adapter

import (
	"fmt"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/fenced"
)

// GuardChanged is the error of a fenced write to key that backend refused
// because the guard key no longer holds the guard's version, or no longer
// exists: it matches fenced.ErrGuardChanged.
func GuardChanged(backend, key string) error {
	return fmt.Errorf("%s: fenced write to %q: %w", backend, key, fenced.ErrGuardChanged)
}

// FenceArgs checks the arguments of backend's fenced write of key guarded
// by guardKey at guard. name makes the store's name of a key (or fails),
// version the store's version of a LastIndex (ok false when no key can
// have it). It returns both names and guard's version; name's error; or
// GuardChanged when guard is nil or version refuses its LastIndex.
func FenceArgs[V any](backend, key, guardKey string, guard *store.KVPair, name func(string) (string, error), version func(uint64) (V, bool)) (k, g string, v V, err error) {
	if k, err = name(key); err != nil {
		return "", "", v, err
	}
	if g, err = name(guardKey); err != nil {
		return "", "", v, err
	}
	ok := guard != nil
	if ok {
		v, ok = version(guard.LastIndex)
	}
	if !ok {
		return "", "", v, GuardChanged(backend, key)
	}
	return k, g, v, nil
}
