package zookeeper

import (
	"context"
	"errors"
	"sort"

	"github.com/go-zookeeper/zk"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/watch"
)

// replacedSince reports whether a call on c failed because the store
// replaced c meanwhile: the caller should try again on the new client.
func (s *kv) replacedSince(c *client, err error) bool {
	return err != nil && isConnErr(err) && !s.closed.Load() && s.cur.Load() != c
}

// merge returns a context that ends with ctx or with the store.
func (s *kv) merge(ctx context.Context) (context.Context, context.CancelFunc) {
	return watch.Joined(ctx, s.ctx)
}

// Watch sends the pair at key first (an empty pair, only Key set, when the
// key does not exist), then the new pair after each change: the new value
// after a write, an empty pair (nil Value) after a delete. It keeps
// watching through deletes and re-creations, across a session expiry and
// when the store replaces its session (see monitor).
// ZooKeeper watches fire once, and the value is re-read after each event,
// so changes in quick succession may arrive as one (the latest). The
// channel closes when ctx ends, the store closes, or a read fails (the
// connection was lost): watch again then.
func (s *kv) Watch(ctx context.Context, key string, _ *store.ReadOptions) (<-chan *store.KVPair, error) {
	p, err := path(key)
	if err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, errClosed
	}
	ch := make(chan *store.KVPair)
	wctx, cancel := s.merge(ctx)
	s.tasks.Go(func() {
		defer close(ch)
		defer cancel()
		var (
			first  = true
			exists bool
			mzxid  int64
		)
		for wctx.Err() == nil {
			c := s.cur.Load()
			data, stat, ev, err := c.conn.GetW(p)
			pair := &store.KVPair{Key: key}
			switch {
			case errors.Is(err, zk.ErrNoNode):
				var found bool
				found, stat, ev, err = c.conn.ExistsW(p)
				if s.replacedSince(c, err) {
					continue
				}
				if err != nil {
					return
				}
				if found { // created meanwhile: read it
					continue
				}
				pair.LastIndex = 0
				if first || exists {
					exists = false
					if !watch.Send(wctx, ch, pair) {
						return
					}
				}
			case s.replacedSince(c, err):
				continue
			case err != nil:
				return
			default:
				pair.Value, pair.LastIndex = nonNil(data), uint64(stat.Version)
				if first || !exists || stat.Mzxid != mzxid {
					exists, mzxid = true, stat.Mzxid
					if !watch.Send(wctx, ch, pair) {
						return
					}
				}
			}
			first = false
			select {
			case <-ev: // changed, or the watch was lost (session expired): read again
			case <-wctx.Done():
				return
			}
		}
	})
	return ch, nil
}

// WatchTree sends the pairs of directory's direct children first, then the
// new list each time a child is created or deleted (not when a child's
// value changes: ZooKeeper's child watches do not report that). A missing
// directory is reported as an empty list until it is created. The channel
// closes like Watch's.
func (s *kv) WatchTree(ctx context.Context, directory string, _ *store.ReadOptions) (<-chan []*store.KVPair, error) {
	p, err := path(directory)
	if err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, errClosed
	}
	ch := make(chan []*store.KVPair)
	wctx, cancel := s.merge(ctx)
	s.tasks.Go(func() {
		defer close(ch)
		defer cancel()
		for wctx.Err() == nil {
			c := s.cur.Load()
			children, _, ev, err := c.conn.ChildrenW(p)
			if errors.Is(err, zk.ErrNoNode) {
				var found bool
				found, _, ev, err = c.conn.ExistsW(p)
				if s.replacedSince(c, err) {
					continue
				}
				if err != nil {
					return
				}
				if found {
					continue
				}
			} else if s.replacedSince(c, err) {
				continue
			} else if err != nil {
				return
			}
			sort.Strings(children)
			pairs := make([]*store.KVPair, 0, len(children))
			for _, child := range children {
				if isLockNode(child) {
					continue
				}
				data, stat, err := c.conn.Get(p + "/" + child)
				if errors.Is(err, zk.ErrNoNode) {
					continue // deleted meanwhile; the watch fires again
				}
				if err != nil {
					return
				}
				pairs = append(pairs, &store.KVPair{Key: keyOf(p + "/" + child), Value: nonNil(data), LastIndex: uint64(stat.Version)})
			}
			if !watch.Send(wctx, ch, pairs) {
				return
			}
			select {
			case <-ev:
			case <-wctx.Done():
				return
			}
		}
	})
	return ch, nil
}
