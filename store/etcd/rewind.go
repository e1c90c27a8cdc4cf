package etcd

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kvtools/valkeyrie/store"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A server that restarts without its data (or from an older backup)
// counts its revisions again from where its data now stands. The etcd
// client resumes a watch after a reconnect from the revision after the
// last one it had: on such a server, a revision in the future, so the
// watch stays silent until the server's revision catches up (hundreds of
// writes later, say), while the reads show the key changing. A
// linearizable read's revision is never below one already seen unless the
// server went back: revisions seen by the reads and watches of this store
// are compared with it, and a read that shows the server gone back ends
// every watch that knows of a later revision (the channel closes; the
// caller watches again, from the new server's revision).

// revisions tracks the revisions this store has seen and the watches it
// runs.
type revisions struct {
	high atomic.Int64 // the highest revision seen by a linearizable read or a watch

	mu      sync.Mutex
	watches map[*revWatch]struct{}
}

// revWatch is one running watch.
type revWatch struct {
	high atomic.Int64  // the last revision it knows: it resumes after it
	gone chan struct{} // closed when the server was seen going back below high
}

// note raises the highest revision seen to rev.
func (r *revisions) note(rev int64) {
	for {
		h := r.high.Load()
		if rev <= h || r.high.CompareAndSwap(h, rev) {
			return
		}
	}
}

// read is called before a linearizable read is sent: done, called with the
// revision of its reply, ends the watches that know of a later revision if
// the reply shows the server below a revision seen before the read was
// sent (a reply of a read sent earlier may be older than an event received
// meanwhile, and proves nothing).
func (r *revisions) read() (done func(rev int64)) {
	before := r.high.Load()
	return func(rev int64) {
		if rev >= before {
			r.note(rev)
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.high.Store(rev)
		for w := range r.watches {
			if w.high.Load() > rev {
				close(w.gone)
				delete(r.watches, w)
			}
		}
	}
}

// add registers a watch that knows of revision rev.
func (r *revisions) add(rev int64) *revWatch {
	w := &revWatch{gone: make(chan struct{})}
	w.high.Store(rev)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.watches == nil {
		r.watches = map[*revWatch]struct{}{}
	}
	r.watches[w] = struct{}{}
	return w
}

// remove forgets w.
func (r *revisions) remove(w *revWatch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.watches, w)
}

// get reads key as kvtools' Get does (linearizable unless opts asks
// otherwise), noting the reply's revision.
func (f *fixed) get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, int64, error) {
	if opts == nil || opts.Consistent { // with the other linearizable reads made meanwhile
		done := f.revs.read()
		r := f.reads.do(ctx, normalize(key), nil, nil)
		if r.err != nil {
			return nil, 0, classify(r.err)
		}
		done(r.rev)
		if r.pair == nil {
			return nil, r.rev, store.ErrKeyNotFound
		}
		return r.pair, r.rev, nil
	}
	resp, err := f.client.Get(ctx, normalize(key), clientv3.WithSerializable())
	if err != nil {
		return nil, 0, classify(err)
	}
	if len(resp.Kvs) == 0 {
		return nil, resp.Header.Revision, store.ErrKeyNotFound
	}
	kv := resp.Kvs[0]
	return &store.KVPair{Key: string(kv.Key), Value: kv.Value, LastIndex: uint64(kv.ModRevision)}, resp.Header.Revision, nil
}

// Get is kvtools' Get, the revision of its reply noted.
func (f *fixed) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	if f.client == nil {
		return f.Classified.Get(ctx, key, opts)
	}
	pair, _, err := f.get(ctx, key, opts)
	return pair, err
}

// Watch sends the pair at key first (ErrKeyNotFound if there is none, as
// kvtools' Watch), then every change after the revision of that read (no
// change between the read and the watch is missed), with require-leader.
// The channel closes when ctx ends, the watch fails (a compacted
// revision, a member cut off from its quorum), or a read of this store
// shows that the server went back below a revision the watch knows of.
func (f *fixed) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	if f.client == nil {
		return f.Classified.Watch(clientv3.WithRequireLeader(ctx), key, opts)
	}
	pair, rev, err := f.get(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	w := f.revs.add(rev)
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	// The client's own watcher: every watch of this store shares its
	// stream (one per kind of context: require-leader here), which
	// ending wctx leaves; a watcher per watch cost a stream and its
	// goroutines each (docs/scale.md).
	events := f.client.Watch(wctx, normalize(key), clientv3.WithRev(rev+1))
	ch := make(chan *store.KVPair)
	go func() {
		defer close(ch)
		defer cancel()
		defer f.revs.remove(w)
		send := func(p *store.KVPair) bool {
			select {
			case ch <- p:
				return true
			case <-w.gone:
			case <-wctx.Done():
			}
			return false
		}
		if !send(pair) {
			return
		}
		for {
			var resp clientv3.WatchResponse
			var ok bool
			select {
			case <-w.gone:
				return
			case resp, ok = <-events:
			}
			if !ok || resp.Err() != nil || resp.Canceled {
				return
			}
			for _, ev := range resp.Events {
				w.high.Store(ev.Kv.ModRevision)
				f.revs.note(ev.Kv.ModRevision)
				if !send(&store.KVPair{Key: key, Value: ev.Kv.Value, LastIndex: uint64(ev.Kv.ModRevision)}) {
					return
				}
			}
		}
	}()
	return ch, nil
}

// WatchesEndWithContext reports whether Watch's channels close once
// their context ends, with no sender waiting past that
// (guard.ContextBoundWatches): with the client, Watch's own.
func (f *fixed) WatchesEndWithContext() bool { return f.client != nil }

// normalize is kvtools' key form: no leading "/".
func normalize(key string) string { return strings.TrimPrefix(key, "/") }
