package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/leadership-go/leadership/store/open"
)

// etcdChildClient opens the child's own etcd client and session.
func etcdChildClient(ctx context.Context, spec childSpec) (*clientv3.Client, *concurrency.Session, error) {
	s, err := open.Parse(spec.URL)
	if err != nil {
		return nil, nil, err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: s.Endpoints, DialTimeout: 5 * time.Second,
		Username: s.Username, Password: s.Password, Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, nil, err
	}
	secs := max(1, int((spec.TTL+time.Second-1)/time.Second))
	// The session's context must outlive the session: its keep-alive
	// stops when it ends.
	sess, err := concurrency.NewSession(cli, concurrency.WithTTL(secs), concurrency.WithContext(ctx))
	if err != nil {
		_ = cli.Close()
		return nil, nil, fmt.Errorf("etcd session: %w", err)
	}
	return cli, sess, nil
}

// childElection campaigns once in etcd's concurrency.Election; on stop it
// resigns (if it leads), closes its session (revoking the lease) and
// exits.
func childElection(ctx context.Context, spec childSpec, ev *eventWriter, cmds <-chan string) error {
	cli, sess, err := etcdChildClient(ctx, spec)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithCancel(ctx)
	el := concurrency.NewElection(sess, spec.Key)
	won := make(chan struct{})
	campaignErr := make(chan error, 1)
	ev.emit(pkReady, 0, monoNow(), "")
	go func() {
		if err := el.Campaign(cctx, spec.Node); err != nil {
			campaignErr <- err
			return
		}
		ev.emit(pkElected, uint64(el.Rev()), monoNow(), "true")
		close(won)
	}()
	stop := waitStop(cmds)
	var errs []error
	select {
	case <-won:
		if stop {
			ev.emit(pkRelease, 0, monoNow(), "")
			rctx, rcancel := context.WithTimeout(ctx, closeTimeout)
			errs = append(errs, el.Resign(rctx))
			rcancel()
			ev.emit(pkReleased, 0, monoNow(), "")
			waitCommand(cmds, cmdExit)
		}
	default:
	}
	cancel()
	errs = append(errs, withTimeout("closing the etcd session", closeTimeout, func() { _ = sess.Close() }))
	ev.emit(pkStopped, 0, monoNow(), "")
	errs = append(errs, withTimeout("closing the etcd client", closeTimeout, func() { _ = cli.Close() }))
	select {
	case err := <-campaignErr:
		if !errors.Is(err, context.Canceled) {
			errs = append(errs, err)
		}
	default:
	}
	return errors.Join(errs...)
}

// childObserver reports every leader etcd's Observe delivers.
func childObserver(ctx context.Context, spec childSpec, ev *eventWriter, cmds <-chan string) error {
	cli, sess, err := etcdChildClient(ctx, spec)
	if err != nil {
		return err
	}
	octx, cancel := context.WithCancel(ctx)
	ch := concurrency.NewElection(sess, spec.Key).Observe(octx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for resp := range ch {
			now := monoNow()
			if len(resp.Kvs) > 0 {
				ev.emit(pkLeader, uint64(resp.Kvs[0].CreateRevision), now, string(resp.Kvs[0].Value))
			}
		}
	}()
	ev.emit(pkReady, 0, monoNow(), "")
	waitStop(cmds)
	cancel()
	<-done
	return errors.Join(sess.Close(), cli.Close())
}
