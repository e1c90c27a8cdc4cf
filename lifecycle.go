package leadership

import (
	"context"
	"sync"
)

// lifecycle is the idle, running, stopped life of a Candidate or a
// Follower: one start, one stop, the channels' delivery goroutines, and why
// it stopped.
type lifecycle struct {
	sinks *sinkGroup
	done  chan struct{}

	mu      sync.Mutex
	state   runState
	cancel  context.CancelCauseFunc
	exitErr error
}

type runState int

const (
	stateIdle runState = iota
	stateRunning
	stateStopped
)

func newLifecycle(sinks ...sink) *lifecycle {
	return &lifecycle{sinks: newSinkGroup(sinks...), done: make(chan struct{})}
}

// start runs begin under a context derived from ctx, which is cancelled
// when Stop is called or ctx ends. begin does what must succeed before the
// start returns (the first read) and returns the engine's run, which runs
// in the background; its error is what Err reports afterwards. A second
// start, or one after stop, fails with ErrAlreadyRunning or ErrStopped.
func (l *lifecycle) start(ctx context.Context, begin func(ctx context.Context) (run func() error, err error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch l.state {
	case stateRunning:
		return ErrAlreadyRunning
	case stateStopped:
		return ErrStopped
	}
	// The run ends with the cause ErrStopped whether Stop or ctx ends it, so
	// that a term's context.Cause says "stopped" either way.
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	unhook := context.AfterFunc(ctx, func() { cancel(ErrStopped) })
	run, err := begin(runCtx)
	if err != nil {
		unhook()
		cancel(ErrStopped)
		return err
	}
	l.state, l.cancel = stateRunning, cancel
	l.sinks.start()
	go func() {
		err := run()
		unhook()
		cancel(ErrStopped)
		l.mu.Lock()
		l.state, l.exitErr = stateStopped, err
		l.mu.Unlock()
		l.sinks.close()
		close(l.done)
	}()
	return nil
}

// stop ends the run, if any, and returns once everything it started has
// ended. Safe at any time, any number of times, from any goroutine.
func (l *lifecycle) stop() {
	l.mu.Lock()
	switch l.state {
	case stateIdle:
		l.state = stateStopped
		l.mu.Unlock()
		l.sinks.close()
		close(l.done)
		return
	case stateRunning:
		l.cancel(ErrStopped)
	}
	l.mu.Unlock()
	<-l.done
}

// current is the state now: idle, running or stopped.
func (l *lifecycle) current() runState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state
}

// err is why the run ended; nil while it runs.
func (l *lifecycle) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.exitErr
}
