package kubernetes

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/internal/electionrecord"
)

// clientGoElector runs client-go's leader elector as identity on the
// Lease name, as the candidate identity, until stop; release says whether
// it releases the Lease when stopped (ReleaseOnCancel).
type clientGoElector struct {
	started chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
}

const (
	cgLeaseDuration = 4 * time.Second
	cgRenewDeadline = 3 * time.Second
	cgRetryPeriod   = 500 * time.Millisecond
)

func runClientGoElector(t *testing.T, name, identity string, release bool) *clientGoElector {
	t.Helper()
	client, err := coordclient.NewForConfig(restOf(t, candidate))
	if err != nil {
		t.Fatal(err)
	}
	e := &clientGoElector{started: make(chan struct{}), done: make(chan struct{})}
	var once sync.Once
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Name: name, Namespace: namespace(t)},
			Client:     client,
			LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
		},
		LeaseDuration:   cgLeaseDuration,
		RenewDeadline:   cgRenewDeadline,
		RetryPeriod:     cgRetryPeriod,
		ReleaseOnCancel: release,
		Name:            identity,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { once.Do(func() { close(e.started) }) },
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ctx context.Context
	ctx, e.cancel = context.WithCancel(context.Background())
	go func() {
		defer close(e.done)
		le.Run(ctx)
	}()
	t.Cleanup(e.stop)
	return e
}

// stop stops the elector and waits for it.
func (e *clientGoElector) stop() {
	e.cancel()
	<-e.done
}

// arrivalStore is a Store that notes when each pair its watches deliver
// reaches the one reading them (a Follower): offered when the Store's
// watch hands it on, taken when the reader took it.
type arrivalStore struct {
	*Store
	mu       sync.Mutex
	arrivals []arrival
}

type arrival struct {
	pair           *store.KVPair
	offered, taken time.Time
}

func (a *arrivalStore) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	in, err := a.Store.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	out := make(chan *store.KVPair)
	go func() {
		defer close(out)
		for p := range in {
			offered := time.Now()
			select {
			case out <- p:
			case <-ctx.Done():
				continue // in closes once ctx ended
			}
			taken := time.Now()
			a.mu.Lock()
			a.arrivals = append(a.arrivals, arrival{pair: p, offered: offered, taken: taken})
			a.mu.Unlock()
		}
	}()
	return out, nil
}

// arrivalOf is the arrival of the pair of index, if one came.
func (a *arrivalStore) arrivalOf(index uint64) (arrival, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ar := range a.arrivals {
		if ar.pair.LastIndex == index {
			return ar, true
		}
	}
	return arrival{}, false
}

// A Follower of this library on a Lease held by client-go's elector names
// its holderIdentity while it renews, and drops it once the renewals stop:
// leaseDurationSeconds, on the follower's own clock, after its watch
// delivered the last renewal (the last renewTime change it saw), not
// earlier, and no later than the timers' latency; it then names the next
// client-go holder, and no one as soon as that one releases.
func TestFollowClientGoElector(t *testing.T) {
	key := readableKey(t, "client-go")
	name, err := leaseName(key)
	if err != nil {
		t.Fatal(err)
	}
	deleteAtCleanup(t, openAs(t, admin), key)

	a := runClientGoElector(t, name, "cg-a", false)
	select {
	case <-a.started:
	case <-time.After(60 * time.Second):
		t.Fatal("client-go's elector cg-a did not lead within 60s")
	}

	// Reads only every 30s while the watch runs (Poll 10s): a watch event
	// that arrives while a read is in flight is dated from before the read
	// (docs/semantics.md section 2), a few milliseconds early, and the
	// bound checked below is exact.
	fs := &arrivalStore{Store: openAs(t, follower)}
	f := leadership.NewFollower(fs, key, leadership.WithTimings(leadership.Timings{Poll: 10 * time.Second}))
	leaders, errs, err := f.FollowElection()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer func() {
		f.Stop()
		for range leaders {
		}
	}()
	wg.Go(func() {
		for err := range errs {
			t.Logf("follower: %v", err)
		}
	})
	named := waitLeader(t, leaders, "cg-a", 30*time.Second)
	t.Logf("the follower names cg-a %v after FollowElection", time.Since(named).Round(time.Millisecond))

	// While cg-a renews, the follower keeps naming it.
	hold := time.After(3 * cgLeaseDuration)
	for waiting := true; waiting; {
		select {
		case l := <-leaders:
			t.Fatalf("the follower changed to %q while cg-a renewed", l)
		case <-hold:
			waiting = false
		}
	}

	// cg-a stops renewing without releasing, as a crashed process.
	a.stop()
	stopped := time.Now()
	l, err := leasesAs(t, follower).Get(ctxFor(t, 10*time.Second), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "cg-a" {
		t.Fatalf("after cg-a stopped, the lease names %v", l.Spec.HolderIdentity)
	}
	lastRenew := l.Spec.RenewTime.Time
	waitLeader(t, leaders, "", 60*time.Second)
	drop := f.Current()
	if drop.Leader != "" {
		t.Fatalf("the follower names %q right after it named no one", drop.Leader)
	}
	index, err := indexOf(l.ResourceVersion)
	if err != nil {
		t.Fatal(err)
	}
	last, ok := fs.arrivalOf(index)
	if !ok {
		t.Fatalf("the follower's watch never delivered cg-a's last renewal (resourceVersion %s, renewTime %v)",
			l.ResourceVersion, lastRenew)
	}
	since := drop.At.Sub(last.offered)
	t.Logf("the follower dropped cg-a %v after its watch delivered the last renewal (taken %v after it was offered), "+
		"%v after its renewTime, %v after it stopped (leaseDurationSeconds %v)",
		since, last.taken.Sub(last.offered), drop.At.Sub(lastRenew).Round(time.Millisecond),
		drop.At.Sub(stopped).Round(time.Millisecond), cgLeaseDuration)
	// It drops it no earlier than leaseDurationSeconds after it saw
	// renewTime change last, when a client-go candidate that saw the same
	// change may take over; and no later than the timers' latency (the
	// generous bound is for a loaded machine under -race).
	if since < cgLeaseDuration {
		t.Errorf("the follower dropped cg-a %v after it saw its last renewal, before the lease of %v ran out", since, cgLeaseDuration)
	}
	if late := cgLeaseDuration + 500*time.Millisecond; since > late {
		t.Errorf("the follower dropped cg-a %v after it saw its last renewal, later than %v", since, late)
	}
	if early := drop.At.Sub(lastRenew); early < cgLeaseDuration {
		t.Errorf("the follower dropped cg-a %v after its last renewTime, before the lease of %v ran out", early, cgLeaseDuration)
	}

	// Another client-go elector takes the Lease once it expired; the
	// follower names it, then no one at once when it releases.
	b := runClientGoElector(t, name, "cg-b", true)
	select {
	case <-b.started:
	case <-time.After(60 * time.Second):
		t.Fatal("client-go's elector cg-b did not lead within 60s")
	}
	waitLeader(t, leaders, "cg-b", 30*time.Second)
	b.stop()
	released := time.Now()
	waitLeader(t, leaders, "", 30*time.Second)
	t.Logf("the follower dropped cg-b %v after it released the lease", time.Since(released).Round(time.Millisecond))
}

// The Store's watch of a client-go Lease marks a renewal as the next write
// of its term (SeqJumps) only in an event of the running watch, which
// misses no version: the first list, and a list after the watch's version
// was gone, which may skip renewals, give it unmarked, and the engine then
// dates it from its previous view of the Lease.
func TestClientGoRenewalsAsWatchEvents(t *testing.T) {
	key := readableKey(t, "client-go-events")
	name, err := leaseName(key)
	if err != nil {
		t.Fatal(err)
	}
	s := openAs(t, admin)
	deleteAtCleanup(t, s, key)
	leases := leasesAs(t, admin)
	ctx := ctxFor(t, 60*time.Second)
	// renew sets the Lease's renewTime to now, as client-go's elector does.
	renew := func() (*coordinationv1.Lease, error) {
		l, err := leases.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		now := metav1.NewMicroTime(time.Now())
		l.Spec.RenewTime = &now
		return leases.Update(ctx, l, metav1.UpdateOptions{})
	}
	holder, secs, now := "cg", int32(4), metav1.NewMicroTime(time.Now())
	created, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &now, AcquireTime: &now},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The watch's first resume is from a version long gone; on the 410,
	// before the watch lists again, the Lease is renewed.
	var resumed sync.Once
	s.resumeHook = func(rv string) string {
		old := rv
		resumed.Do(func() { old = "1" })
		return old
	}
	var renewed sync.Once
	missed := make(chan *coordinationv1.Lease, 1)
	s.watchHook = func(ev string) {
		if ev != "gone" {
			return
		}
		renewed.Do(func() {
			l, err := renew()
			if err != nil {
				t.Errorf("renewing while the watch is gone: %v", err)
			}
			missed <- l
		})
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := s.Watch(wctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, p *store.KVPair, l *coordinationv1.Lease, jumps bool) {
		t.Helper()
		rec, ok := electionrecord.Decode(p.Value)
		if !ok || rec.Leader != holder || rec.Seq != uint64(l.Spec.RenewTime.UnixMicro()) ||
			p.LastIndex != mustIndex(t, l.ResourceVersion) || rec.SeqJumps != jumps {
			t.Fatalf("%s: %+v at %d, want the renewal at %s with SeqJumps %v", what, rec, p.LastIndex, l.ResourceVersion, jumps)
		}
	}
	check("the first list", next(t, ch), created, false)
	var l *coordinationv1.Lease
	select {
	case l = <-missed:
	case <-time.After(30 * time.Second):
		t.Fatal("no 410 Gone within 30s")
	}
	if l == nil {
		t.FailNow()
	}
	check("the list after 410 Gone", next(t, ch), l, false)
	if l, err = renew(); err != nil {
		t.Fatal(err)
	}
	check("the next renewal", next(t, ch), l, true)
}

func mustIndex(t *testing.T, rv string) uint64 {
	t.Helper()
	n, err := indexOf(rv)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
