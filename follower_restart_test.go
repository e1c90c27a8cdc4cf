package leadership

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leadership-go/leadership/internal/memfault"
	"github.com/leadership-go/leadership/store/memory"
)

// After an outage that ends with the store empty, the follower sees the
// new term's record first by a read, dated from its last view of the store
// without it: a lease that may already have run out. It must not name that
// holder only to drop it in the same instant (it did, at every read, while
// a watch that resumed from a revision the restarted server did not have
// stayed silent); it names it once a renewal shows it leading.
func TestFollowerDoesNotNameAndDropAtOnceAfterWipe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		name := simName("wipe-follow")
		const ttl = time.Second
		var cands []*Candidate
		for _, n := range []string{"a", "b"} {
			h, _ := memory.Open(context.Background(), memory.Config{Name: name})
			defer h.Close()
			c := NewCandidate(h, "wiped", n, ttl)
			if _, _, err := c.RunForElection(); err != nil {
				t.Fatal(err)
			}
			defer c.Stop()
			cands = append(cands, c)
		}
		hf, _ := memory.Open(context.Background(), memory.Config{Name: name})
		defer hf.Close()
		f := NewFollower(hf, "wiped")
		if _, _, err := f.FollowElection(); err != nil {
			t.Fatal(err)
		}
		defer f.Stop()
		obs := f.Status()
		var seen []Status
		recvUntil := func(what string, cond func(Status) bool) {
			t.Helper()
			timeout := time.After(time.Minute)
			for {
				select {
				case o := <-obs:
					seen = append(seen, o)
					if cond(o) {
						return
					}
				case <-timeout:
					t.Fatalf("%s: not within a minute (observations %+v)", what, seen)
				}
			}
		}
		recvUntil("the follower names the first leader", func(o Status) bool { return o.Leader != "" })
		first := seen[len(seen)-1]

		memfault.StopServer(name)
		time.Sleep(3 * ttl)
		memfault.LoseData(name)
		memfault.StartServer(name)
		restarted := len(seen)
		recvUntil("the follower names the new term's leader", func(o Status) bool { return o.Leader != "" && o.Token > first.Token })
		// The new leader renews for several TTLs: named throughout.
		time.Sleep(5 * ttl)
		for more := true; more; {
			select {
			case o := <-obs:
				seen = append(seen, o)
			default:
				more = false
			}
		}
		for i := restarted; i+1 < len(seen); i++ {
			if seen[i].Leader != "" && seen[i+1].Leader == "" {
				t.Fatalf("the follower named %s (term %d) and dropped it %v later, while it led (observations %+v)",
					seen[i].Leader, seen[i].Token, seen[i+1].At.Sub(seen[i].At), seen[restarted:])
			}
		}
		leading := 0
		for _, c := range cands {
			if c.IsLeader() {
				leading++
			}
		}
		if leading != 1 {
			t.Fatalf("%d leaders after the wipe", leading)
		}
	})
}
