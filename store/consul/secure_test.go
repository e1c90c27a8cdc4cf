package consul

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/consul/api"

	lstore "github.com/leadership-go/leadership/store"
)

// The agent's ACL messages become *ACLError naming the right missing.
func TestACLMessages(t *testing.T) {
	for _, tc := range []struct {
		msg          string
		is           error
		perm, on, id string
		anonymous    bool
		says         string
	}{
		{msg: `Permission denied: token with AccessorID 'da58' lacks permission 'key:write' on "secure/x"`,
			is: errPermissionDenied, perm: "key:write", on: "secure/x", id: "da58",
			says: `consul: put: permission denied: the ACL token (AccessorID da58) lacks key:write on "secure/x"`},
		{msg: `Permission denied: anonymous token lacks permission 'key:read' on "a \"b\"". The anonymous token is used implicitly when a request does not specify a token.`,
			is: errPermissionDenied, perm: "key:read", on: `a "b"`, anonymous: true,
			says: `no ACL token was given, and the anonymous token lacks key:read`},
		{msg: "Permission denied", is: errPermissionDenied, says: "consul: put: permission denied: Permission denied"},
		{msg: "ACL not found", is: errTokenNotFound, says: "consul: put: the ACL token is not known to the agent"},
		{msg: "token does not exist: ACL not found", is: errTokenNotFound, says: "not known"},
	} {
		e := aclError("put", api.StatusError{Code: 403, Body: tc.msg})
		if e == nil || !errors.Is(e, tc.is) || e.Permission != tc.perm || e.Resource != tc.on || e.Accessor != tc.id || e.Anonymous != tc.anonymous {
			t.Errorf("%q: %#v", tc.msg, e)
			continue
		}
		if !strings.Contains(e.Error(), tc.says) || strings.Contains(e.Error(), "\n") {
			t.Errorf("%q: %q does not say %q on one line", tc.msg, e.Error(), tc.says)
		}
	}
	if e := aclError("get", api.StatusError{Code: 404, Body: "Permission denied"}); e != nil {
		t.Errorf("a 404 is not an ACL error: %v", e)
	}
	if e := aclError("atomic put", errors.New("Failed request: ACL not found")); !errors.Is(e, errTokenNotFound) {
		t.Errorf("a refused transaction: %v", e)
	}
}

// A read transaction whose reply lacks a key (Consul filters the keys the
// token may not read) refuses that Get with errPermissionDenied, not
// store.ErrKeyNotFound.
func TestFilteredReadIsDenied(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/status/leader":
			_ = json.NewEncoder(w).Encode("127.0.0.1:8300")
		case "/v1/txn":
			_, _ = w.Write([]byte(`{"Results":[],"Errors":null,"ResultsFilteredByACLs":true}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	s, err := Open(context.Background(), Config{Endpoints: []string{srv.Listener.Addr().String()}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Get(context.Background(), "secure/x", nil)
	var e *ACLError
	if !errors.Is(err, errPermissionDenied) || !errors.Is(err, lstore.ErrPermission) || !errors.As(err, &e) || e.Permission != "key:read" || e.Resource != "secure/x" || e.Op != "get" {
		t.Fatalf("Get = %v, want errPermissionDenied for key:read on secure/x", err)
	}
	t.Log(err)
}
