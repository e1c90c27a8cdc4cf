package demo

import (
	"fmt"
	"strings"
	"time"
)

// printf writes to the demo's output. Write errors are ignored: the demo
// has nowhere else to report them.
func (d *demo) printf(format string, a ...any) {
	_, _ = fmt.Fprintf(d.out, format, a...)
}

// note records and shows something the demo does, and returns its event.
func (d *demo) note(format string, a ...any) event {
	d.flush()
	return d.rec.add(event{kind: evNote, text: fmt.Sprintf(format, a...)})
}

// flush shows the recorded events not shown yet, one aligned line each.
// Unelected events and store errors are left out: step-downs show the
// former, and errors are counted at the end.
func (d *demo) flush() {
	events := d.rec.between(d.printed, -1)
	d.printed += len(events)
	for _, e := range events {
		var what string
		switch e.kind {
		case evElected:
			what = fmt.Sprintf("%s elected (elected=true), fencing token %d", e.node, e.token)
		case evStepDown:
			what = fmt.Sprintf("%s stepped down: the context of its term %d is done", e.node, e.token)
		case evFollower:
			if e.leader == "" {
				what = `follower reports no leader ("")`
			} else {
				what = "follower reports leader " + e.leader
			}
		case evNote:
			what = e.text
		case evProxy:
			what = "request via the proxy -> " + e.text
		default:
			continue
		}
		d.printf("  %s  %s\n", stamp(e.at), what)
	}
}

// summary shows the measured times as a table.
func (d *demo) summary(t *times) {
	d.printf("\nSummary (%d candidates, TTL %s)\n", d.cfg.Candidates, ShortDuration(d.cfg.TTL))
	rows := []struct{ what, value, note string }{
		{"first election (start -> elected)", ms(t.first), ""},
		{"follower named the first leader at", ms(t.firstFollower), ""},
		{"resign handoff (Resign -> next elected)", ms(t.handoff), ""},
		{"follower saw the handoff after", ms(t.handoffFollower), ""},
		{"vanish -> dead leader stepped down", ms(t.stepDown), d.ofTTL(t.stepDown)},
		{"vanish -> takeover (successor elected)", ms(t.takeover), d.ofTTL(t.takeover)},
		{"vanish -> follower named the successor", ms(t.takeoverFollower), d.ofTTL(t.takeoverFollower)},
		{"vanish -> successor answered via proxy", ms(t.takeoverProxy), d.ofTTL(t.takeoverProxy)},
		{"step-down ahead of takeover by", ms(t.takeover - t.stepDown), ""},
		{"stop everything", ms(t.stop), ""},
	}
	for _, r := range rows {
		line := fmt.Sprintf("  %-40s %10s", r.what, r.value)
		if r.note != "" {
			line += "  (" + r.note + ")"
		}
		d.printf("%s\n", line)
	}
}

// ofTTL formats x as a multiple of the TTL.
func (d *demo) ofTTL(x time.Duration) string {
	return fmt.Sprintf("%.2f x TTL", float64(x)/float64(d.cfg.TTL))
}

// stamp formats an offset from the start of the demo.
func stamp(at time.Duration) string { return fmt.Sprintf("[+%9s]", ms(at)) }

// ms formats a duration in milliseconds, with one decimal, or three under
// a millisecond so that fast handoffs do not show as zero.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	if d < time.Millisecond {
		return fmt.Sprintf("%.3fms", v)
	}
	return fmt.Sprintf("%.1fms", v)
}

// ShortDuration formats d as time.Duration does, without the zero units it
// leaves at the end ("1m" rather than "1m0s").
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
