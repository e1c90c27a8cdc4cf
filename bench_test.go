package leadership

import (
	"slices"
	"testing"
	"time"
)

// benchPair runs two candidates and a follower on one memory backend, each
// on its own handle, and waits for the first leader.
func benchPair(b *testing.B) (cands [2]*Candidate, elected [2]<-chan bool, leaders <-chan string, follower *Follower) {
	b.Helper()
	c := &cluster{t: &testing.T{}, name: b.Name() + time.Now().String()}
	for i := range cands {
		h, err := openMemory(c.name)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = h.Close() })
		cands[i] = NewCandidate(h, "bench", []string{"a", "b"}[i], 10*time.Second, WithTimings(Timings{ResignHoldoff: benchHoldoff}))
		el, _, err := cands[i].RunForElection()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(cands[i].Stop)
		elected[i] = el
	}
	h, err := openMemory(c.name)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close() })
	follower = NewFollower(h, "bench")
	leaders, _, err = follower.FollowElection()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(follower.Stop)
	return cands, elected, leaders, follower
}

// benchHoldoff keeps a resigning candidate out of the next election long
// enough for the waiting one to win; each iteration lets it lapse untimed.
const benchHoldoff = 20 * time.Millisecond

// untilTrue reads ch until it delivers true.
func untilTrue(b *testing.B, ch <-chan bool) {
	timeout := time.After(wait)
	for {
		select {
		case v := <-ch:
			if v {
				return
			}
		case <-timeout:
			b.Fatal("no election within the deadline")
		}
	}
}

// untilName reads ch until it delivers name.
func untilName(b *testing.B, ch <-chan string, name string) {
	timeout := time.After(wait)
	for {
		select {
		case v := <-ch:
			if v == name {
				return
			}
		case <-timeout:
			b.Fatal("follower did not see the leader within the deadline")
		}
	}
}

// BenchmarkHandoff measures, per op, one election: the leader resigns and
// the waiting candidate wins. It reports the time from Resign to the new
// leader's true on its channel (p50, p99) and the time from Resign to the
// follower naming the new leader. Allocations per op are those of one whole
// election across both candidates, the follower and the store.
func BenchmarkHandoff(b *testing.B) {
	cands, elected, leaders, _ := benchPair(b)
	leader := -1
	for leader < 0 {
		for i, c := range cands {
			if c.IsLeader() {
				leader = i
			}
		}
		time.Sleep(time.Millisecond)
	}
	untilTrue(b, elected[leader])
	names := []string{"a", "b"}
	untilName(b, leaders, names[leader])
	handoff := make([]time.Duration, 0, b.N)
	follow := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		next := 1 - leader
		start := time.Now()
		cands[leader].Resign()
		untilTrue(b, elected[next])
		handoff = append(handoff, time.Since(start))
		untilName(b, leaders, names[next])
		follow = append(follow, time.Since(start))
		leader = next
		b.StopTimer()
		time.Sleep(benchHoldoff + 5*time.Millisecond)
		b.StartTimer()
	}
	b.StopTimer()
	reportPercentiles(b, "handoff", handoff)
	reportPercentiles(b, "follower", follow)
}

// BenchmarkFollowerUpdate measures the time from the store write that makes
// a new leader to a follower's report of it, without a candidate engine in
// the way: a writer publishes a new leader record and the follower's
// channel is read.
func BenchmarkFollowerUpdate(b *testing.B) {
	name := b.Name() + time.Now().String()
	h, err := openMemory(name)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	f := NewFollower(h, "bench")
	leaders, _, err := f.FollowElection()
	if err != nil {
		b.Fatal(err)
	}
	defer f.Stop()
	<-leaders
	w, err := openMemory(name)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	ctx := b.Context()
	var prev = snapshot{}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		rec := record{Leader: []string{"x", "y"}[i%2], ID: "id", Term: uint64(i + 1), TTLms: 60000}
		start := time.Now()
		_, pair, err := w.AtomicPut(ctx, "bench", rec.Stamp(), prev.pair, nil)
		if err != nil {
			b.Fatal(err)
		}
		prev = snapshot{kind: snapRecord, pair: pair, rec: rec}
		untilName(b, leaders, rec.Leader)
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, "update", lat)
}

// BenchmarkIdleRenewal measures what an idle leader costs: one renewal
// (a compare-and-swap of the record) per op, as the engine does it.
func BenchmarkIdleRenewal(b *testing.B) {
	h, err := openMemory(b.Name() + time.Now().String())
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	c := NewCandidate(h, "bench", "a", 10*time.Second)
	if _, _, err := c.RunForElection(); err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	for !c.IsLeader() {
		time.Sleep(time.Millisecond)
	}
	ctx := b.Context()
	pair, err := h.Get(ctx, "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	c.Stop() // the benchmark now renews by hand, as the engine would
	if pair, err = h.Get(ctx, "bench", nil); err != nil {
		b.Fatal(err)
	}
	rec, _ := decodeRecord(pair.Value)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rec.Seq++
		ok, next, err := h.AtomicPut(ctx, "bench", rec.Stamp(), pair, nil)
		if err != nil || !ok {
			b.Fatal(err)
		}
		pair = next
	}
}

func reportPercentiles(b *testing.B, name string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	pick := func(q float64) float64 {
		return float64(ds[min(len(ds)-1, int(q*float64(len(ds))))].Microseconds())
	}
	b.ReportMetric(pick(0.50), name+"-p50-µs")
	b.ReportMetric(pick(0.99), name+"-p99-µs")
}
