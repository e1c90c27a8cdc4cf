package zookeeper

import (
	"context"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

func TestConfigValidation(t *testing.T) {
	storetest.RejectsConfigs(t, Open, storetest.ConfigRejected(errInvalidConfig), netConfig.Invalid("127.0.0.1:2181",
		storetest.InvalidConfig[Config]{Name: "password without user", Config: Config{Endpoints: []string{"127.0.0.1:2181"}, Password: "p"}, Field: "Username"},
		storetest.InvalidConfig[Config]{Name: "negative session timeout", Config: Config{Endpoints: []string{"127.0.0.1:2181"}, SessionTimeout: -1}, Field: "SessionTimeout"},
		storetest.InvalidConfig[Config]{Name: "tiny session timeout", Config: Config{Endpoints: []string{"127.0.0.1:2181"}, SessionTimeout: time.Microsecond}, Field: "SessionTimeout"},
	))
}

func TestConfigDefaults(t *testing.T) {
	st, err := Config{Endpoints: []string{"zk1:2181", "zk2:2181"}}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if st.sessionTimeout != defaultSessionTimeout || st.dialTimeout != defaultDialTimeout || st.requestTimeout != defaultRequestTimeout {
		t.Fatalf("defaults not applied: %+v", st)
	}
}

func TestOpenUnreachable(t *testing.T) {
	storetest.NoLeaks(t)
	storetest.OpenUnreachable(t, netConfig.Dialer(storetest.Erase(Open)), storetest.Unreachable{Names: storetest.NamesFirstEndpoint, WrapsDeadline: true})
}

// netConfig is the Config of endpoints and timeouts alone.
var netConfig storetest.NetConfig[Config] = func(endpoints []string, dial, request time.Duration) Config {
	return Config{Endpoints: endpoints, DialTimeout: dial, RequestTimeout: request}
}

func TestOpenUnreachableEnsemble(t *testing.T) {
	storetest.NoLeaks(t)
	h1, h2 := storetest.NewHungServer(t), storetest.NewHungServer(t)
	eps := []string{h1.Addr(), storetest.RefusedAddr(t), h2.Addr()}
	// About DialTimeout, plus closing the client (its close request waits
	// up to 1s for a server that never connected): only a hang goes past
	// ten times that.
	storetest.ExpectUnreachable(t, eps, storetest.UnreachableBound(2*time.Second), storetest.NamesFirstEndpoint, func() (store.Store, error) {
		return Open(context.Background(), Config{Endpoints: eps, DialTimeout: 2 * time.Second})
	})
	if n := h1.OpenConns() + h2.OpenConns(); n != 0 {
		t.Errorf("%d connections to the hung servers left open", n)
	}
}

// A store whose server stops answering after Open: calls return by their
// deadline, a watch can be cancelled, and Close leaves nothing running.
func TestCutAfterOpen(t *testing.T) {
	eps := servers(t, envSingle)
	storetest.NoLeaks(t)
	fwd := electiontest.Forwarder(t, eps[0])
	s, err := Open(context.Background(), Config{Endpoints: []string{fwd.Addr()}, RequestTimeout: 300 * time.Millisecond, SessionTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	key := freshKey("cut")
	storetest.CleanupTree(t, openSingle(t), storetest.Dir(key))
	storetest.CutAfterOpen(t, s, key, fwd.Cut)
}
