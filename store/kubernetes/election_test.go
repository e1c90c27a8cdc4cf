package kubernetes

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	lstore "github.com/leadership-go/leadership/store"
)

// The conformance suite, every client as the candidate identity (get,
// list, watch, create, update on leases: what a candidate needs), each
// through a forwarder the suite can cut. With LEADERSHIP_RESTART_SERVERS=1
// StoreRestart stops the API server and its etcd, wipes etcd's data, and
// starts them again (scripts/servers.sh stop --wipe kube; start kube).
func TestConformance(t *testing.T) {
	electiontest.Conformance(t, "kubernetes", "kube", []string{serverAddr(t)}, opener(t, candidate))
}

// A candidate's Lease shows its holder as kubectl get lease does.
func TestLeaseShowsHolder(t *testing.T) {
	key := readableKey(t, "shows-holder")
	s := openAs(t, candidate)
	deleteAtCleanup(t, openAs(t, admin), key)
	c := leadership.NewCandidate(s, key, "node-1", 3*time.Second)
	el, _, err := c.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		c.Stop()
		for range el {
		}
	}()
	waitTrue(t, el, "node-1 elected")
	name, _ := leaseName(key)
	leases := leasesAs(t, follower)
	l, err := leases.Get(ctxFor(t, 10*time.Second), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sp := l.Spec
	if sp.HolderIdentity == nil || *sp.HolderIdentity != "node-1" || sp.LeaseDurationSeconds == nil || *sp.LeaseDurationSeconds != 3 ||
		sp.AcquireTime == nil || sp.RenewTime == nil || sp.LeaseTransitions == nil {
		t.Fatalf("lease %s spec %+v", name, sp)
	}
	t.Logf("lease %s: holder %s, duration %ds, acquired %v, renewed %v, transitions %d, labels %v",
		name, *sp.HolderIdentity, *sp.LeaseDurationSeconds, sp.AcquireTime.Time, sp.RenewTime.Time, *sp.LeaseTransitions, l.Labels)
	first := sp.RenewTime.Time
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err = leases.Get(ctxFor(t, 10*time.Second), name, metav1.GetOptions{})
		if err == nil && l.Spec.RenewTime.After(first) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("renewTime still %v after 30s (%v)", first, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Stop releases: no holder any more, the term stays in leaseTransitions.
	c.Stop()
	for range el {
	}
	l, err = leases.Get(ctxFor(t, 10*time.Second), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity != nil {
		t.Fatalf("after Stop the lease still names %q", *l.Spec.HolderIdentity)
	}
}

// RBAC: a candidate needs get, list, watch, create and update on leases;
// a follower get, list and watch; a client without rights cannot change
// the record and gets lstore.ErrPermission, naming its user.
func TestRBAC(t *testing.T) {
	key := readableKey(t, "rbac")
	deleteAtCleanup(t, openAs(t, admin), key)

	// The candidate identity campaigns and leads.
	c := leadership.NewCandidate(openAs(t, candidate), key, "cand", 2*time.Second)
	el, cerrs, err := c.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer func() {
		c.Stop()
		for range el {
		}
	}()
	wg.Go(func() {
		for err := range cerrs {
			t.Logf("candidate: %v", err)
		}
	})
	waitTrue(t, el, "the candidate identity elected")

	// The follower identity follows and names it.
	fs := openAs(t, follower)
	f := leadership.NewFollower(fs, key)
	leaders, ferrs, err := f.FollowElection()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		f.Stop()
		for range leaders {
		}
	}()
	wg.Go(func() {
		for err := range ferrs {
			t.Errorf("follower: %v", err)
		}
	})
	waitLeader(t, leaders, "cand", 30*time.Second)

	// The follower identity cannot write.
	ctx := ctxFor(t, 30*time.Second)
	pair, err := fs.Get(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := fs.AtomicPut(ctx, key, []byte("mine"), pair, nil); !errors.Is(err, lstore.ErrPermission) ||
		!strings.Contains(err.Error(), "leadership-follower") {
		t.Fatalf("AtomicPut as the follower: %v, want lstore.ErrPermission naming the user", err)
	} else {
		t.Logf("follower's write: %v", err)
	}

	// No rights: nothing is readable or writable, with typed errors.
	ns := openAs(t, norights)
	if _, err := ns.Get(ctx, key, nil); !errors.Is(err, lstore.ErrPermission) {
		t.Errorf("Get without rights: %v, want lstore.ErrPermission", err)
	}
	if _, err := ns.Watch(ctx, key, nil); !errors.Is(err, lstore.ErrPermission) {
		t.Errorf("Watch without rights: %v, want lstore.ErrPermission", err)
	}
	if _, _, err := ns.AtomicPut(ctx, key, []byte("mine"), pair, nil); !errors.Is(err, lstore.ErrPermission) {
		t.Errorf("AtomicPut without rights: %v, want lstore.ErrPermission", err)
	}
	if _, _, err := ns.AtomicPut(ctx, key+"-other", []byte("mine"), nil, nil); !errors.Is(err, lstore.ErrPermission) {
		t.Errorf("create without rights: %v, want lstore.ErrPermission", err)
	}
	var de *Error
	if _, err := ns.Get(ctx, key, nil); !errors.As(err, &de) || de.Op != "get" || !strings.Contains(err.Error(), "leadership-norights") {
		t.Errorf("Get without rights: %v, want an *Error naming the user", err)
	} else {
		t.Logf("no rights: %v", err)
	}

	// A Candidate without rights is refused at once (its first read) with
	// the typed error, or reports it on its error channel, and never
	// leads; the record still names the leader.
	intruder := leadership.NewCandidate(ns, key, "intruder", 2*time.Second)
	iel, ierrs, err := intruder.RunForElection()
	if err != nil {
		if !errors.Is(err, lstore.ErrPermission) {
			t.Errorf("RunForElection without rights: %v, want lstore.ErrPermission", err)
		}
		t.Logf("RunForElection without rights: %v", err)
	} else {
		select {
		case err := <-ierrs:
			if !errors.Is(err, lstore.ErrPermission) || !errors.Is(err, leadership.ErrStore) {
				t.Errorf("intruder's error %v, want a store error matching lstore.ErrPermission", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the candidate without rights reported no error in 30s")
		}
		intruder.Stop()
		for v := range iel {
			if v {
				t.Error("the candidate without rights was elected")
			}
		}
		for range ierrs {
		}
	}
	// The follower identity as a candidate: it reads, but cannot write.
	fc := leadership.NewCandidate(fs, key+"-follower", "reader", 2*time.Second)
	fel, ferrs2, err := fc.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ferrs2:
		if !errors.Is(err, lstore.ErrPermission) {
			t.Errorf("the follower identity's candidate: %v, want lstore.ErrPermission", err)
		} else {
			t.Logf("the follower identity's candidate: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("the follower identity's candidate reported no error in 30s")
	}
	fc.Stop()
	for v := range fel {
		if v {
			t.Error("the follower identity's candidate was elected")
		}
	}
	for range ferrs2 {
	}
	if got := f.Leader(); got != "cand" {
		t.Errorf("the follower names %q after the intruders, want cand", got)
	}
	if !c.IsLeader() {
		t.Error("the candidate no longer leads")
	}
}

func waitTrue(t *testing.T, ch <-chan bool, what string) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case v, ok := <-ch:
			if !ok {
				t.Fatalf("%s: channel closed", what)
			}
			if v {
				return
			}
		case <-deadline:
			t.Fatalf("%s: not within 60s", what)
		}
	}
}

// waitLeader waits until leaders delivers want, and returns when.
func waitLeader(t *testing.T, leaders <-chan string, want string, within time.Duration) time.Time {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case l, ok := <-leaders:
			if !ok {
				t.Fatalf("follower closed waiting for %q", want)
			}
			if l == want {
				return time.Now()
			}
		case <-deadline:
			t.Fatalf("follower did not name %q within %v", want, within)
		}
	}
}
