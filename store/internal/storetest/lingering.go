package storetest

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// AfterLingering wraps a package's testing.M for goleak.VerifyTestMain:
// after the tests, it waits (up to within) until no goroutine runs fn, a
// third-party function known to end late but surely (kvtools' watch loop
// ends only when its blocking query returns), then calls each of then
// (such as closing http.DefaultClient's idle connections). goleak then
// still reports every goroutine left, fn's included if it never ended.
func AfterLingering(m *testing.M, fn string, within time.Duration, then ...func()) interface{ Run() int } {
	return lingeringM{m: m, fn: fn, within: within, then: then}
}

type lingeringM struct {
	m      *testing.M
	fn     string
	within time.Duration
	then   []func()
}

func (l lingeringM) Run() int {
	code := l.m.Run()
	deadline := time.Now().Add(l.within)
	for running(l.fn) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	for _, f := range l.then {
		f()
	}
	return code
}

// running reports whether any goroutine's stack holds fn.
func running(fn string) bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Contains(string(buf[:n]), fn)
		}
		buf = make([]byte, 2*len(buf))
	}
}
