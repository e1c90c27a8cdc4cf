package electiontest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
	"github.com/leadership-go/leadership/store/memory"
)

// Many on the in-process store: every election is elected, named, stopped
// and seen released.
func TestManyOnMemory(t *testing.T) {
	s, err := memory.Open(context.Background(), memory.Config{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	r := electiontest.Many{N: 20, TTL: 3 * time.Second, Wait: 60 * time.Second}.Run(t, s, "many") // a TTL long enough that a loaded machine times out no request
	t.Log(r)
	if !r.OK() || r.ElectedIn == 0 || len(r.ReleaseSeen) != r.N || len(r.StoreErrs) != 0 {
		t.Fatalf("on memory: %v", r)
	}
}

func TestErrorKind(t *testing.T) {
	err := fmt.Errorf("leadership: get %q: %w", "a/17", storeErr("code 429 on a/17")) // as the engine writes a failed get
	if got, want := electiontest.ErrorKind(err), "get: code N on KEY"; got != want {
		t.Fatalf("ErrorKind = %q, want %q", got, want)
	}
	short := fmt.Errorf("leadership: watch %q: %w", "a", storeErr("code 7 on a")) // a key that is also in the call's name
	if got, want := electiontest.ErrorKind(short), "watch: code N on KEY"; got != want {
		t.Fatalf("ErrorKind = %q, want %q", got, want)
	}
	if got, want := electiontest.ErrorKind(errors.New("x 12")), "x N"; got != want {
		t.Fatalf("ErrorKind = %q, want %q", got, want)
	}
}

// storeErr is a store's error as the engine reports it: it matches
// leadership.ErrStore.
type storeErr string

func (e storeErr) Error() string        { return string(e) }
func (e storeErr) Is(target error) bool { return target == leadership.ErrStore }
