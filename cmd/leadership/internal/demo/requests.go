package demo

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// get sends one request through the proxy and describes the answer: who
// answered ("" unless a node did) and a short text.
func (d *demo) get(ctx context.Context) (node, text string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.pURL+"/", nil)
	if err != nil {
		return "", err.Error()
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return "", "error: " + err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	msg := strings.TrimSpace(strings.TrimPrefix(string(body), "leadership proxy: "))
	for addr, label := range d.labels {
		msg = strings.ReplaceAll(msg, addr, label)
	}
	switch {
	case resp.StatusCode == http.StatusOK && strings.HasPrefix(msg, "hello from "):
		return strings.TrimPrefix(msg, "hello from "), fmt.Sprintf("200 %q", msg)
	case resp.StatusCode == http.StatusServiceUnavailable:
		return "", fmt.Sprintf("503 (Retry-After: %s): %s", resp.Header.Get("Retry-After"), msg)
	}
	return "", fmt.Sprintf("%d: %s", resp.StatusCode, msg)
}

// viaProxy sends n requests through the proxy, shows who answered and
// checks that it was the leader. Requests cut short by the end of ctx are
// a *MissingEventError, not a violation.
func (d *demo) viaProxy(ctx context.Context, n int, leader string) error {
	var who []string
	ok := true
	for range n {
		node, text := d.get(ctx)
		if node == "" {
			node = text
		}
		ok = ok && node == leader
		who = append(who, node)
	}
	d.note("%d requests via the proxy answered by: %s", n, strings.Join(who, ", "))
	d.flush()
	if err := ctx.Err(); err != nil {
		return &MissingEventError{What: "answers through the proxy", Limit: d.limit, Err: err}
	}
	if !ok {
		return violationf("requests through the proxy did not all reach the leader %s", leader)
	}
	d.printf("  => requests follow the leader: OK\n")
	return nil
}

// probe sends requests through the proxy every few milliseconds from the
// vanish of dead until a live node answers, and records every change of
// answer as an evProxy event (node set when a node answered). It counts
// the answers in counts, and the kinds of answer in the order first seen
// in order.
func (d *demo) probe(ctx context.Context, dead string, counts map[string]int, order *[]string) {
	defer d.wg.Done()
	every := max(d.cfg.TTL/50, 2*time.Millisecond)
	last := ""
	for {
		node, text := d.get(ctx)
		kind := text
		if i := strings.IndexAny(text, " :"); i > 0 {
			kind = text[:i]
		}
		if node != "" {
			kind = node
		}
		if counts[kind] == 0 {
			*order = append(*order, kind)
		}
		counts[kind]++
		if text != last {
			last = text
			d.rec.add(event{kind: evProxy, node: node, text: text})
		}
		if node != "" && node != dead {
			return
		}
		select {
		case <-time.After(every):
		case <-ctx.Done():
			return
		case <-d.quit:
			return
		}
	}
}
