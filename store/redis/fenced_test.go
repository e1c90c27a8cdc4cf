package redis

import (
	"context"
	"testing"
	"time"

	kvredis "github.com/kvtools/redis"

	"github.com/leadership-go/leadership/store/internal/storetest"
)

// Fenced writes on a store from Open: see storetest.Fenced.
func TestFencedPut(t *testing.T) {
	storetest.Fenced(t, openClient(t, serverConfig(t)), storetest.Dir(uniqueKey(t)))
}

// Fenced writes on kvtools' store (raw codec) given to Wrap.
func TestFencedPutWrapped(t *testing.T) {
	cfg := serverConfig(t)
	storetest.Fenced(t, wrap(rawStore(t, cfg.Endpoints), 5*time.Second), storetest.Dir(uniqueKey(t)))
}

// A kvtools store with the JSON codec, whose values are not stored as
// given, does not claim fenced writes once wrapped.
func TestJSONCodecNotFenced(t *testing.T) {
	cfg := serverConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	kv, err := kvredis.NewWithCodec(ctx, cfg.Endpoints, nil, kvredis.JSONCodec{})
	if err != nil {
		t.Fatal(err)
	}
	s := wrap(kv, time.Second)
	defer func() { _ = s.Close() }()
	storetest.NotFenced(t, s)
}
