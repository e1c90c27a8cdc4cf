package kubernetes

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/kvtools/valkeyrie/store"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
)

// Watch delivers key's pairs on the returned channel until ctx ends or
// the Store is closed (the channel then closes). It lists the Lease by
// name first (an error there, such as one matching store.ErrPermission, is returned at
// once), sends its current pair (an empty pair if it does not exist), then
// watches it from that
// list's resourceVersion: every change is sent, a deletion as a pair with
// an empty value. A watch that ends (the server's timeout, a broken
// connection, a restarted server) is started again from the last
// resourceVersion seen; when the server no longer has that version ("too
// old", HTTP 410 Gone, after a compaction or a restart) or refuses it
// ("too large", a server restored with less data) the Lease is listed
// again, its pair sent if it changed, and the watch resumes from the
// list's version. Errors after the first list are retried, with a backoff
// up to two seconds, never reported: the engine reads the key on its own
// schedule and treats the watch as a hint.
//
// Sends wait for the reader, or for ctx to end: a reader that walks away
// must cancel ctx.
func (s *Store) Watch(ctx context.Context, key string, _ *store.ReadOptions) (<-chan *store.KVPair, error) {
	name, err := leaseName(key)
	if err != nil {
		return nil, s.keyError("watch", key, err)
	}
	if s.ctx.Err() != nil {
		return nil, s.fail("watch", name, key, errClosed)
	}
	w := &watcher{s: s, key: key, name: name, out: make(chan *store.KVPair)}
	w.ctx, w.cancel = context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, w.cancel)
	first, err := w.list()
	if err != nil {
		stop()
		w.cancel()
		return nil, s.fail("watch", name, key, err)
	}
	s.watches.Add(1)
	go func() {
		defer s.watches.Done()
		defer stop()
		defer w.cancel()
		defer close(w.out)
		w.run(first)
	}()
	return w.out, nil
}

// watcher is one Watch.
type watcher struct {
	s          *Store
	key, name  string
	out        chan *store.KVPair
	ctx        context.Context
	cancel     context.CancelFunc
	rv         string // the resourceVersion to resume from
	sentRV     string // the resourceVersion of the last pair sent ("" none)
	sentExists bool   // the last pair sent was a Lease, not a deletion
	progressed bool   // the last watch delivered an event
}

// listed is what one list of the Lease found.
type listed struct {
	lease *coordinationv1.Lease // nil when absent
	rv    string                // the list's resourceVersion
}

func (w *watcher) selector() string {
	return fields.OneTermEqualSelector("metadata.name", w.name).String()
}

// list reads the Lease with a list by name (whose resourceVersion a watch
// can start from), bounded by the Store's RequestTimeout.
func (w *watcher) list() (listed, error) {
	c, cancel := context.WithTimeout(w.ctx, w.s.requestTimeout)
	defer cancel()
	l, err := w.s.leases.List(c, metav1.ListOptions{FieldSelector: w.selector()})
	if err != nil {
		return listed{}, err
	}
	out := listed{rv: l.ResourceVersion}
	for i := range l.Items {
		if l.Items[i].Name == w.name {
			out.lease = &l.Items[i]
		}
	}
	return out, nil
}

// hook tells the tests' hook about event.
func (w *watcher) hook(event string) {
	if h := w.s.watchHook; h != nil {
		h(event)
	}
}

func (w *watcher) run(first listed) {
	// The first event says what the key holds, an empty pair if nothing.
	if first.lease == nil && !w.sendDeleted(first.rv) {
		return
	}
	if !w.apply(first) {
		return
	}
	fails := 0
	for w.ctx.Err() == nil {
		relist, ok := w.watchOnce()
		if !ok {
			return
		}
		if w.progressed {
			fails = 0
		}
		if !relist {
			continue
		}
		// Too old, too large, or a failure: list again.
		for {
			if fails > 0 && !w.sleep(backoff(fails)) {
				return
			}
			fails++
			l, err := w.list()
			if err == nil {
				w.hook("relisted")
				if !w.apply(l) {
					return
				}
				break
			}
			if w.ctx.Err() != nil {
				return
			}
		}
	}
}

// apply sends what a list found, if it differs from what was last sent,
// and resumes from its version. It reports false when the watch ends.
func (w *watcher) apply(l listed) bool {
	w.rv = l.rv
	switch {
	case l.lease != nil && l.lease.ResourceVersion != w.sentRV:
		return w.sendLease(l.lease, false)
	case l.lease == nil && w.sentExists:
		return w.sendDeleted(l.rv)
	}
	return true
}

// watchOnce runs one watch from w.rv until it ends. It reports whether
// the Lease must be listed again before the next watch (the version is
// gone or refused, or the watch failed), and false when the Watch ends.
func (w *watcher) watchOnce() (relist, ok bool) {
	timeout := int64(300 + rand.IntN(300)) // as client-go's reflectors: 5 to 10 minutes
	if h := w.s.resumeHook; h != nil {
		w.rv = h(w.rv)
	}
	wi, err := w.s.leases.Watch(w.ctx, metav1.ListOptions{
		FieldSelector:       w.selector(),
		ResourceVersion:     w.rv,
		AllowWatchBookmarks: true,
		TimeoutSeconds:      &timeout,
	})
	if err != nil {
		if w.ctx.Err() != nil {
			return false, false
		}
		if gone(err) {
			w.hook("gone")
		}
		return true, true
	}
	w.hook("watching")
	defer wi.Stop()
	events := 0
	w.progressed = false
	for {
		select {
		case <-w.ctx.Done():
			return false, false
		case ev, open := <-wi.ResultChan():
			if !open {
				// The server ended it (its timeout, a broken connection):
				// resume from the last version, but list again if it
				// ended at once, which a broken server can do forever.
				return events == 0, true
			}
			events++
			w.progressed = true
			switch ev.Type {
			case watch.Added, watch.Modified:
				l, ok := ev.Object.(*coordinationv1.Lease)
				if !ok {
					continue
				}
				w.rv = l.ResourceVersion
				if !w.sendLease(l, true) {
					return false, false
				}
			case watch.Deleted:
				l, ok := ev.Object.(*coordinationv1.Lease)
				if !ok {
					continue
				}
				w.rv = l.ResourceVersion
				if !w.sendDeleted(l.ResourceVersion) {
					return false, false
				}
			case watch.Bookmark:
				if l, ok := ev.Object.(*coordinationv1.Lease); ok && l.ResourceVersion != "" {
					w.rv = l.ResourceVersion
				}
			case watch.Error:
				if gone(apierrors.FromObject(ev.Object)) {
					w.hook("gone")
				}
				return true, true
			}
		}
	}
}

// gone reports whether err says the watch's version is no longer (or not
// yet) available: 410 Gone / Expired ("too old resource version"), or
// "too large resource version".
func gone(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) ||
		(apierrors.IsTimeout(err) && apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge))
}

// sendLease sends l's pair; next says that it is an event of the running
// watch, which missed no version since the last pair sent (pairOf).
func (w *watcher) sendLease(l *coordinationv1.Lease, next bool) bool {
	pair, err := pairOf(w.key, l, next)
	if err != nil {
		return true // a Lease this package cannot read: the engine's reads will say so
	}
	w.sentRV, w.sentExists = l.ResourceVersion, true
	return w.send(pair)
}

func (w *watcher) sendDeleted(rv string) bool {
	pair := &store.KVPair{Key: w.key}
	if n, err := indexOf(rv); err == nil {
		pair.LastIndex = n
	}
	w.sentRV, w.sentExists = rv, false
	return w.send(pair)
}

func (w *watcher) send(p *store.KVPair) bool {
	select {
	case w.out <- p:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// sleep waits d, or until the watch ends (false).
func (w *watcher) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// backoff is the pause before the n-th consecutive retry: 100ms doubling
// up to 2s, with jitter.
func backoff(n int) time.Duration {
	d := 100 * time.Millisecond << min(n-1, 5)
	d = min(d, 2*time.Second)
	return d/2 + rand.N(d/2+1)
}
