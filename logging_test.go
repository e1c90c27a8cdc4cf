package leadership

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// lockedBuffer is a log destination the engine's goroutines share with the
// test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the lines logged so far that contain msg.
func (l *lockedBuffer) lines(msg string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.b.String(), "\n") {
		if strings.Contains(line, msg) {
			out = append(out, line)
		}
	}
	return out
}

// With WithLogger, the engine logs one line when elected, one when it
// steps down (with the reason), the first store error of an outage (not
// every retry), and one line when the store recovers.
func TestLoggerLinesPerEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf lockedBuffer
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
		c := newCluster(t)
		cand := NewCandidate(c.handle(), "logged", "a", time.Second, WithLogger(log), WithTimings(Timings{RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond}))
		elected, errs, err := cand.RunForElection()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cand.Stop)
		recvUntil(t, elected, "elected", func(v bool) bool { return v })
		eventually(t, "an elected line", func() bool { return len(buf.lines("leadership: elected")) == 1 })

		stopServer(c.name)
		recvUntil(t, elected, "stepped down", func(v bool) bool { return !v })
		for range 5 { // several failed retries
			recv(t, errs, "a store error")
		}
		startServer(c.name)
		eventually(t, "a recovered line", func() bool { return len(buf.lines("leadership: store recovered")) == 1 })
		if got := buf.lines("leadership: store error"); len(got) != 1 {
			t.Fatalf("%d store error lines in one outage, want 1 (rate-limited):\n%s", len(got), strings.Join(got, "\n"))
		}
		down := buf.lines("leadership: stepped down")
		if len(down) != 1 || !strings.Contains(down[0], "reason=lease_expired") {
			t.Fatalf("stepped-down lines: %q", down)
		}
		recvUntil(t, elected, "elected again", func(v bool) bool { return v })
		cand.Resign()
		eventually(t, "a resigned line", func() bool {
			down := buf.lines("leadership: stepped down")
			return len(down) == 2 && strings.Contains(down[1], "reason=resigned")
		})
	})
}

// Without WithLogger the engine logs nothing, not even on the default
// logger.
func TestSilentByDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf lockedBuffer
		old := slog.Default()
		slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
		t.Cleanup(func() { slog.SetDefault(old) })
		c := newCluster(t)
		rs := c.campaign("silent", time.Second, 1)
		recvUntil(t, rs[0].elected, "elected", func(v bool) bool { return v })
		stopServer(c.name)
		recvUntil(t, rs[0].errs, "a store error", func(error) bool { return true })
		startServer(c.name)
		rs[0].Resign()
		rs[0].Stop()
		if got := buf.lines("leadership"); len(got) != 0 {
			t.Fatalf("logged without a logger: %q", got)
		}
	})
}
