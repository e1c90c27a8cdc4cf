package kubernetes

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/leadership-go/leadership"
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

// A Follower of this library on a Lease held by client-go's elector names
// its holderIdentity while it renews, and drops it once the renewals stop:
// leaseDurationSeconds, on the follower's own clock, after its last view
// of the Lease before the latest renewal (so no earlier than
// leaseDurationSeconds less a renewal interval after the last renewTime);
// it then names the next client-go holder, and no one as soon as that one
// releases.
func TestFollowClientGoElector(t *testing.T) {
	key := readableKey(t, "client-go")
	name, err := LeaseName(key)
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

	f := leadership.NewFollower(openAs(t, follower), key)
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
	dropped := waitLeader(t, leaders, "", 60*time.Second)
	t.Logf("the follower dropped cg-a %v after its last renewTime (leaseDurationSeconds %v), %v after it stopped",
		dropped.Sub(lastRenew).Round(time.Millisecond), cgLeaseDuration, dropped.Sub(stopped).Round(time.Millisecond))
	// It drops it no earlier than a lease duration after a renewal it saw
	// (the one before the last: renewals come every RetryPeriod, with up
	// to 20% jitter, plus the API's latency): the holder, which stops
	// leading RenewDeadline after its last renewal, had stopped by then.
	if early := dropped.Sub(lastRenew); early < cgLeaseDuration-3*cgRetryPeriod {
		t.Errorf("the follower dropped cg-a %v after its last renewal, before the lease of %v could run out", early, cgLeaseDuration)
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
