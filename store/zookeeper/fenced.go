package zookeeper

import (
	"bytes"
	"context"
	"errors"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

// fencedAttempts bounds how often FencedPut builds its multi again when
// the key's node or one of its parents was created or deleted meanwhile.
const fencedAttempts = 4

// FencedPut writes value at key (a persistent node) if guardKey's node
// still has guard.LastIndex as its data version, in one ZooKeeper multi: a
// version check of the guard node, then a set of the key's node or, when
// it does not exist, the creation of its missing parents (empty, as Put
// makes them) and of the node. ZooKeeper applies all of a multi or none of
// it: when the check fails (the guard node was written again or no longer
// exists), nothing is written, not even a parent, and the error matches
// fenced.ErrGuardChanged. Other failures are mapped as Put's.
//
// A node's data version starts again at 0 when it is deleted and created
// anew (DeleteElection, an ensemble that lost its data), so the version
// alone does not identify a record, and a multi's check compares the
// version only. FencedPut therefore first reads the guard node and
// refuses, with the same error, unless it holds guard.Value at
// guard.LastIndex; the multi then checks the version. What remains: a
// guard node deleted and written anew, with another value, up to the very
// same version between that read and the multi is not refused.
func (s *kv) FencedPut(ctx context.Context, key string, value []byte, guardKey string, guard *store.KVPair) error {
	p, g, v, err := adapter.FenceArgs(backend, key, guardKey, guard, path, version)
	if err != nil {
		return err
	}
	found, same, err := s.holds(g, v, guard.Value)
	if err != nil {
		return s.fail("fenced put", err)
	}
	if !found || !same {
		return adapter.GuardChanged(backend, key)
	}
	for attempt := 1; ; attempt++ {
		ops, err := s.fencedOps(p, value, g, v)
		if err != nil {
			return s.fail("fenced put", err)
		}
		res, err := s.zc().Multi(ops...)
		if err == nil {
			return nil
		}
		if len(res) > 0 && (errors.Is(res[0].Error, zk.ErrBadVersion) || errors.Is(res[0].Error, zk.ErrNoNode)) {
			return adapter.GuardChanged(backend, key)
		}
		changed := errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrNodeExists)
		if !changed || attempt == fencedAttempts {
			return s.fail("fenced put", err)
		}
		// The key's node or a parent came or went meanwhile: look again.
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// fencedOps returns the operations of FencedPut's multi: the check of the
// guard node g at version v, then a set of p or, if p does not exist, the
// creation of its missing parents and of p.
func (s *kv) fencedOps(p string, value []byte, g string, v int32) ([]any, error) {
	ops := []any{&zk.CheckVersionRequest{Path: g, Version: v}}
	exists, _, err := s.zc().Exists(p)
	if err != nil {
		return nil, err
	}
	if exists {
		return append(ops, &zk.SetDataRequest{Path: p, Data: value, Version: -1}), nil
	}
	// The missing ancestors, nearest first, until one that exists.
	var missing []string
	for parent := p[:strings.LastIndexByte(p, '/')]; parent != ""; parent = parent[:strings.LastIndexByte(parent, '/')] {
		ok, _, err := s.zc().Exists(parent)
		if err != nil {
			return nil, err
		}
		if ok {
			break
		}
		missing = append(missing, parent)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		ops = append(ops, &zk.CreateRequest{Path: missing[i], Data: []byte{}, Acl: s.acl})
	}
	return append(ops, &zk.CreateRequest{Path: p, Data: value, Acl: s.acl}), nil
}

// holds reads the node p, after syncing the session's server with the
// leader (a lagging server would widen the window between this read and
// the multi, and could refuse a write of the live term): found reports
// whether it exists, same whether it has data version v and data value.
func (s *kv) holds(p string, v int32, value []byte) (found, same bool, err error) {
	if err := s.sync(p); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return false, false, err
	}
	data, stat, err := s.zc().Get(p)
	if errors.Is(err, zk.ErrNoNode) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	return true, stat.Version == v && bytes.Equal(data, value), nil
}
