package etcd

import (
	"testing"
	"time"

	"github.com/kvtools/etcdv3"

	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// Fenced writes on a store from Open: see storetest.Fenced.
func TestFencedPut(t *testing.T) {
	s := openClient(t, serverConfig(t))
	storetest.Fenced(t, s, storetest.Dir(uniqueKey(t)))
}

// Fenced writes on a raw kvtools store given to Wrap.
func TestFencedPutWrapped(t *testing.T) {
	cfg := serverConfig(t)
	raw := electiontest.OpenRaw(t, etcdv3.StoreName, cfg.Endpoints, &etcdv3.Config{ConnectionTimeout: 5 * time.Second})
	storetest.Fenced(t, wrap(raw, 5*time.Second), storetest.Dir(uniqueKey(t)))
}
