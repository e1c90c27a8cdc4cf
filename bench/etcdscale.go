package main

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/leadership-go/leadership/internal/workpool"
	"github.com/leadership-go/leadership/store/open"
)

// The --scale row of etcd's own concurrency.Election, measured like the
// library's rows (scale.go) on the same etcd: N elections, each with two
// candidates and an observer, on one client. Its users run one session
// per process, shared by every election of the process: the first
// candidates of all elections share session A and the second ones session
// B, as two processes would, and each candidate is the goroutine that
// calls Campaign (a candidate that waits is one blocked in Campaign).

// escaleElection is one Election of the run.
type escaleElection struct {
	won     [2]atomic.Pointer[concurrency.Election] // what candidate k won
	elected [2]chan struct{}                        // a token each time candidate k wins
	named   atomic.Bool                             // the observer named a leader
}

// measureScaleElection runs the --scale measurement on etcd's Election.
func measureScaleElection(ctx context.Context, be *backend, sc *scaleConfig, prefix string) *scaleResult {
	res := &scaleResult{Name: electionName, Elections: sc.elections, Participants: 3 * sc.elections, TTL: sc.ttl.String(), IdleWindow: sc.idle.String()}
	fail := func(what string, err error) *scaleResult {
		res.Errors = append(res.Errors, what+": "+err.Error())
		progress("%s: %s: %v", electionName, what, err)
		return res
	}
	spec, err := open.Parse(be.url)
	if err != nil {
		return fail("open", err)
	}
	probe, err := newServerProbe(ctx, be)
	if err != nil {
		res.ServerNote = err.Error()
	} else {
		defer probe.close()
	}
	heap0, g0 := heapInUse(), runtime.NumGoroutine()
	cli, err := clientv3.New(clientv3.Config{Endpoints: spec.Endpoints, DialTimeout: 5 * time.Second,
		Username: spec.Username, Password: spec.Password, Logger: zap.NewNop()})
	if err != nil {
		return fail("open", err)
	}
	closeClient := func() {
		if err := withTimeout("closing the etcd client", closeTimeout, func() { _ = cli.Close() }); err != nil {
			res.Errors = append(res.Errors, err.Error())
		}
	}
	ttl := max(1, int((sc.ttl+time.Second-1)/time.Second))
	var sessions [2]*concurrency.Session
	for k := range sessions {
		if sessions[k], err = concurrency.NewSession(cli, concurrency.WithTTL(ttl)); err != nil {
			closeClient()
			return fail("session", err)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	var campaigns, readers sync.WaitGroup
	var transitions, namedCount, errCount atomic.Int64
	var firstErr atomic.Value
	noteErr := func(err error) {
		if errCount.Add(1) == 1 {
			firstErr.Store(err.Error())
		}
	}
	allNamed := make(chan struct{})
	els := make([]*escaleElection, sc.elections)
	defer func() {
		start := time.Now()
		cancel()
		for _, s := range sessions { // revokes the leases: every key goes
			if err := withTimeout("closing an etcd session", closeTimeout, func() { _ = s.Close() }); err != nil {
				res.Errors = append(res.Errors, err.Error())
			}
		}
		// The waiting campaigns and Observe's channels end when their
		// watches do: at 10,000 elections not all did on the context's
		// end within minutes, but all do when the client closes.
		closeClient()
		campaigns.Wait()
		readers.Wait()
		res.StopSeconds = time.Since(start).Seconds()
		res.ChannelErrors = errCount.Load()
		if s, ok := firstErr.Load().(string); ok {
			res.FirstChannelError = s
		}
		progress("%s: stopped %d elections in %.1fs", electionName, sc.elections, res.StopSeconds)
	}()

	progress("%s: starting %d elections (2 candidates on 2 shared sessions, an observer each) on one client", electionName, sc.elections)
	start := time.Now()
	workpool.Each(sc.elections, sc.parallel, func(i int) {
		e := &escaleElection{elected: [2]chan struct{}{make(chan struct{}, 1), make(chan struct{}, 1)}}
		els[i] = e
		pfx := fmt.Sprintf("%s/%d", prefix, i)
		obs := concurrency.NewElection(sessions[0], pfx).Observe(runCtx)
		readers.Go(func() {
			for resp := range obs {
				if len(resp.Kvs) > 0 && !e.named.Swap(true) && namedCount.Add(1) == int64(sc.elections) {
					close(allNamed)
				}
			}
		})
		for k, s := range sessions {
			campaign := func() {
				el := concurrency.NewElection(s, pfx)
				if err := el.Campaign(runCtx, fmt.Sprintf("e%d-c%d", i, k)); err != nil {
					if runCtx.Err() == nil {
						noteErr(err)
					}
					return
				}
				e.won[k].Store(el)
				transitions.Add(1)
				select {
				case e.elected[k] <- struct{}{}:
				default:
				}
			}
			if k == 0 {
				// The first wins at once: run here, so that the start is
				// paced as the library's (64 calls at a time). Started
				// all at once, 20,000 campaigns got "etcdserver: too
				// many requests" at 10,000 elections.
				campaign()
				continue
			}
			campaigns.Go(campaign)
		}
	})
	res.StartSeconds = time.Since(start).Seconds()
	wait := time.NewTimer(10*sc.ttl + time.Duration(sc.elections)*10*time.Millisecond)
	defer wait.Stop()
	select {
	case <-allNamed:
	case <-wait.C:
		return fail("leaders", fmt.Errorf("%d of %d observers named no leader", int64(sc.elections)-namedCount.Load(), sc.elections))
	case <-ctx.Done():
		return fail("leaders", ctx.Err())
	}
	res.LeadersSeconds = time.Since(start).Seconds()
	res.StartupErrors = errCount.Load()
	progress("%s: every observer names a leader %.1fs after the first start", electionName, res.LeadersSeconds)

	// The observers' readers are the bench's; a candidate's goroutine
	// blocked in Campaign is the Election's (its user needs one).
	heap1, g1 := heapInUse(), runtime.NumGoroutine()
	res.HeapKiBPer = float64(int64(heap1)-int64(heap0)) / 1024 / float64(sc.elections)
	res.GoroutinesPer = float64(g1-g0-sc.elections) / float64(sc.elections)

	if sc.idle > 0 {
		s0, serr := probe.sampleOrErr(ctx)
		t0, tr0, e0 := time.Now(), transitions.Load(), errCount.Load()
		select {
		case <-time.After(sc.idle):
		case <-ctx.Done():
			return fail("idle", ctx.Err())
		}
		took := time.Since(t0)
		heap2, g2 := heapInUse(), runtime.NumGoroutine()
		res.HeapKiBIdle = float64(int64(heap2)-int64(heap0)) / 1024 / float64(sc.elections)
		res.GoroutinesIdle = float64(g2-g0-sc.elections) / float64(sc.elections)
		res.IdleChanges = transitions.Load() - tr0
		res.IdleErrors = errCount.Load() - e0
		res.Server, res.ServerNote = probe.window(ctx, s0, serr, took, res.ServerNote)
		if res.Server != nil {
			progress("%s: idle: the server counted %.0f requests/min", electionName, res.Server.RequestsPerMin)
		}
	}

	var samples []float64
	for i := range min(sc.rounds, sc.elections) {
		e := els[i]
		lead := -1
		for k := range e.won {
			if e.won[k].Load() != nil {
				lead = k
			}
		}
		if lead < 0 {
			return fail("handoff", fmt.Errorf("election %d has no leader", i))
		}
		other := 1 - lead
		t0 := time.Now()
		rctx, rcancel := context.WithTimeout(ctx, 3*sc.ttl+5*time.Second)
		err := e.won[lead].Load().Resign(rctx)
		rcancel()
		if err != nil {
			return fail("handoff", fmt.Errorf("election %d: resign: %w", i, err))
		}
		ms, err := awaitSuccessor(ctx, e.elected[other], t0, sc.ttl, i)
		if err != nil {
			return fail("handoff", err)
		}
		samples = append(samples, ms)
	}
	res.summarizeHandoffs(samples)
	return res
}
