package consul

import (
	"testing"
	"time"

	"github.com/leadership-go/leadership/fenced"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

// Fenced writes on a store from Open: see storetest.Fenced.
func TestFencedPut(t *testing.T) {
	storetest.Fenced(t, openAgent(t), storetest.Dir(freshKey("fenced")))
}

// kvtools' store, given to Wrap, cannot write fenced: the result does not
// claim to.
func TestWrappedNotFenced(t *testing.T) {
	if s, ok := Wrap(kvtoolsStore(t, agent(t)), time.Second).(fenced.Putter); ok {
		t.Fatalf("Wrap returned a %T, which implements fenced.Putter", s)
	}
}
