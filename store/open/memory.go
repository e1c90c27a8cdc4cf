package open

import (
	"context"
	"strings"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/memory"
)

// memoryBackend opens the embedded store, store/memory: memory://NAME. It
// is in every build: it needs nothing outside this module and valkeyrie.
var memoryBackend = backend{name: "memory", schemes: []string{"memory"}, open: (*Spec).openMemory}

func (s *Spec) openMemory(_ context.Context) (store.Store, error) {
	name := s.Path
	if len(s.Endpoints) > 0 {
		name = strings.Join(s.Endpoints, ",")
	}
	if name == "" {
		return nil, &ConfigError{Invalid: storeURL{}, Field: "host", Reason: "memory:// needs a name, as in memory://my-cluster"}
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	return nonNil(memory.Open(context.Background(), memory.Config{Name: name}))
}
