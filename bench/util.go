package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/leadership-go/leadership/leadershiptest"
)

// evKind is what a recorded event is about.
type evKind int

const (
	evElected  evKind = iota // a candidate's elected channel delivered val (etcd: Campaign returned)
	evStepDown               // the context of a candidate's term ended
	evFollower               // a follower (etcd: an observer) named leader name ("" for none)
)

// event is one timestamped delivery, stamped by the goroutine that received
// it, right after the receive.
type event struct {
	at    time.Time
	kind  evKind
	who   int // candidate index in its group
	val   bool
	name  string
	token uint64
}

// recorder collects the events of one election group and lets the
// measuring goroutine wait for one.
type recorder struct {
	mu      sync.Mutex
	events  []event
	changed chan struct{} // closed and replaced at every event
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) add(e event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	close(r.changed)
	r.changed = make(chan struct{})
}

// mark returns the index the next event will have.
func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// waitFor returns the first event at index from or later that matches,
// waiting at most timeout.
func (r *recorder) waitFor(ctx context.Context, from int, timeout time.Duration, match func(event) bool) (event, error) {
	var found event
	err := r.until(ctx, timeout, func(evs []event) bool {
		for _, e := range evs[min(from, len(evs)):] {
			if match(e) {
				found = e
				return true
			}
		}
		return false
	})
	return found, err
}

// until waits, at most timeout, until cond holds on the events so far.
var errTimeout = errors.New("timed out")

func (r *recorder) until(ctx context.Context, timeout time.Duration, cond func([]event) bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		ok := cond(r.events)
		changed := r.changed
		r.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return errTimeout
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// snapshot returns a copy of the events.
func (r *recorder) snapshot() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// withTimeout runs f and waits for it at most d; on timeout f keeps running
// in the background and an error says what hung.
func withTimeout(what string, d time.Duration, f func()) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		return fmt.Errorf("%s did not return within %v", what, d)
	}
}

// msf converts a duration to milliseconds.
func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// stats summarises samples in milliseconds. Percentiles are nearest-rank:
// the smallest sample with at least q of the samples at or below it.
type stats struct {
	N      int     `json:"n"`
	Min    float64 `json:"min_ms"`
	P50    float64 `json:"p50_ms"`
	P99    float64 `json:"p99_ms"`
	Max    float64 `json:"max_ms"`
	Median float64 `json:"median_ms"`
}

func summarize(xs []float64) *stats {
	if len(xs) == 0 {
		return nil
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	pick := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return s[max(0, min(len(s)-1, i))]
	}
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return &stats{N: len(s), Min: s[0], P50: pick(0.50), P99: pick(0.99), Max: s[len(s)-1], Median: med}
}

// fmtMS formats milliseconds with a precision that suits their size.
func fmtMS(v float64) string {
	a := math.Abs(v)
	if a < 0.005 {
		v = 0 // no "-0.00"
	}
	switch {
	case a < 10:
		return fmt.Sprintf("%.2f", v)
	case a < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// defaultPorts are the ports of the schemes whose URLs may leave them out.
var defaultPorts = map[string]string{
	"etcd": "2379", "consul": "8500", "zk": "2181", "zookeeper": "2181",
	"redis": "6379", "rediss": "6379", "postgres": "5432", "postgresql": "5432",
}

// splitURL cuts a store URL into what comes before its host list
// (scheme://userinfo@), the hosts, and what follows (/path?query), the way
// store/open parses it.
func splitURL(raw string) (head string, hosts []string, tail string, err error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return "", nil, "", fmt.Errorf("%q is not scheme://hosts", raw)
	}
	cut := len(rest)
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		cut = i
	}
	hostPart, tail := rest[:cut], rest[cut:]
	head = scheme + "://"
	if at := strings.LastIndexByte(hostPart, '@'); at >= 0 {
		head += hostPart[:at+1]
		hostPart = hostPart[at+1:]
	}
	if hostPart == "" {
		return "", nil, "", fmt.Errorf("%s:// URL has no host", scheme)
	}
	return head, strings.Split(hostPart, ","), tail, nil
}

// forwardURL opens one leadershiptest.Forwarder per host of raw and
// returns the URL with every host replaced by its forwarder, and done, to
// call once the client of that URL is open (k8s://: it removes the
// kubeconfig written for the forwarder; kubeForwardURL).
func forwardURL(raw string) (string, []*leadershiptest.Forwarder, func(), error) {
	if s, _, _ := strings.Cut(raw, "://"); strings.EqualFold(s, "k8s") {
		return kubeForwardURL(raw)
	}
	head, hosts, tail, err := splitURL(raw)
	if err != nil {
		return "", nil, nil, err
	}
	scheme, _, _ := strings.Cut(strings.ToLower(head), "://")
	var fwds []*leadershiptest.Forwarder
	addrs := make([]string, 0, len(hosts))
	for _, h := range hosts {
		if _, _, err := net.SplitHostPort(h); err != nil {
			p, ok := defaultPorts[scheme]
			if !ok {
				closeForwarders(fwds)
				return "", nil, nil, fmt.Errorf("host %q has no port", h)
			}
			h = net.JoinHostPort(strings.Trim(h, "[]"), p)
		}
		f, err := leadershiptest.NewForwarder(h)
		if err != nil {
			closeForwarders(fwds)
			return "", nil, nil, fmt.Errorf("forwarder to %s: %w", h, err)
		}
		fwds = append(fwds, f)
		addrs = append(addrs, f.Addr())
	}
	return head + strings.Join(addrs, ",") + tail, fwds, func() {}, nil
}

func closeForwarders(fwds []*leadershiptest.Forwarder) {
	for _, f := range fwds {
		_ = f.Close()
	}
}

// cpuModel returns the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
