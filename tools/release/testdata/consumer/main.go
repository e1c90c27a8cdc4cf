// Command consumer is a program outside the repository, built by
// tools/release's TestConsumers (consumer_test.go) against the released
// modules from a module proxy, with the adapters and metrics bridge that
// the test adds (imports.go and one file of metrics/). Its arguments are
// checks, in pairs WANT URL:
//
//	elect URL           open URL, elect a leader there (with the bridge's
//	                    metrics, which must then say so) and report it
//	unreachable URL     opening URL fails with an error matching store.ErrUnreachable
//	left-out URL        opening URL fails with open.ErrBackendLeftOut: its adapter
//	                    is not imported
//	unknown-scheme URL  opening URL fails with open.ErrUnknownScheme, not
//	                    open.ErrBackendLeftOut: no backend has the scheme
//	scheme NAME         the program opens NAME:// URLs (open.Schemes)
//
// It prints a line per check and exits 1 at the first that fails.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/open"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 || len(args)%2 != 0 {
		fmt.Fprintln(os.Stderr, "usage: consumer WANT URL [WANT URL ...]")
		os.Exit(2)
	}
	for i := 0; i < len(args); i += 2 {
		if err := check(args[i], args[i+1]); err != nil {
			fmt.Fprintln(os.Stderr, "consumer:", err)
			os.Exit(1)
		}
	}
}

// check runs one check.
func check(want, url string) error {
	if want == "scheme" {
		if !slices.Contains(open.Schemes, url) {
			return fmt.Errorf("open.Schemes %v lacks %s", open.Schemes, url)
		}
		fmt.Printf("scheme %s: opened by this program\n", url)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	kv, err := open.Store(ctx, url)
	if want == "elect" {
		if err != nil {
			return fmt.Errorf("%s: %w", url, err)
		}
		defer kv.Close()
		return elect(ctx, kv, url)
	}
	if kv != nil {
		kv.Close()
		return fmt.Errorf("%s: opened a store, want an error (%s)", url, want)
	}
	var ok bool
	switch want {
	case "unreachable":
		ok = errors.Is(err, store.ErrUnreachable)
	case "left-out":
		ok = errors.Is(err, open.ErrBackendLeftOut)
	case "unknown-scheme":
		ok = errors.Is(err, open.ErrUnknownScheme) && !errors.Is(err, open.ErrBackendLeftOut)
	default:
		return fmt.Errorf("unknown check %q", want)
	}
	if !ok {
		return fmt.Errorf("%s: %v, want the %s error", url, err, want)
	}
	fmt.Printf("%s %s: %v (after %v)\n", want, url, err, time.Since(start).Round(time.Millisecond))
	return nil
}

// elect runs a candidate on kv until it is elected, and reports its term.
func elect(ctx context.Context, kv leadership.Backend, url string) error {
	m, measured, err := newMetrics()
	if err != nil {
		return err
	}
	var opts []leadership.Option
	if m != nil {
		opts = append(opts, leadership.WithMetrics(m))
	}
	c := leadership.NewCandidate(kv, "consumer/leader", "node-1", 15*time.Second, opts...)
	defer c.Stop()
	elected, errs, err := c.RunForElection()
	if err != nil {
		return fmt.Errorf("%s: RunForElection: %w", url, err)
	}
	for {
		select {
		case is, ok := <-elected:
			if !ok {
				return fmt.Errorf("%s: the candidate stopped unelected", url)
			}
			if !is {
				continue
			}
			term, ok := c.CurrentTerm()
			if !ok {
				return fmt.Errorf("%s: elected, but no current term", url)
			}
			fmt.Printf("elect %s: node-1 elected, token %d\n", url, term.Token)
			if measured != nil {
				what, err := measured()
				if err != nil {
					return fmt.Errorf("%s: metrics: %w", url, err)
				}
				fmt.Printf("elect %s: metrics: %s\n", url, what)
			}
			return nil
		case err := <-errs:
			fmt.Printf("elect %s: store error: %v\n", url, err)
		case <-ctx.Done():
			return fmt.Errorf("%s: not elected: %w", url, ctx.Err())
		}
	}
}
