package all_test

// The one face of the adapters (issue 24): every adapter under store/ is
// held to it here, by its types (compiled against this file) and by its
// source (parsed with go/parser).

import (
	"context"
	"crypto/tls"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	vstore "github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/fenced"
	"github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/consul"
	"github.com/leadership-go/leadership/store/etcd"
	"github.com/leadership-go/leadership/store/memory"
	"github.com/leadership-go/leadership/store/postgres"
	"github.com/leadership-go/leadership/store/redis"
	"github.com/leadership-go/leadership/store/zookeeper"
)

// face is one adapter's face, as the compiler sees it.
type face struct {
	dir    string       // the package's directory, below store/
	config reflect.Type // its Config
	store  any          // a nil *Store
	// creds are the Config's credential fields: Username and Password,
	// or Token for Consul.
	creds []string
	// network is false for memory, which has no servers: its Config has
	// none of the network fields.
	network bool
}

// openFunc makes sure, at compile time, that every adapter's Open is
// func(context.Context, Config) (*Store, error).
func openFunc[C any, S any](_ func(context.Context, C) (*S, error)) (reflect.Type, any) {
	return reflect.TypeFor[C](), (*S)(nil)
}

func faces() []face {
	userPass := []string{"Username", "Password"}
	var out []face
	add := func(dir string, creds []string, network bool, cfg reflect.Type, s any) {
		out = append(out, face{dir: dir, config: cfg, store: s, creds: creds, network: network})
	}
	t, s := openFunc(memory.Open)
	add("memory", nil, false, t, s)
	t, s = openFunc(etcd.Open)
	add("etcd", userPass, true, t, s)
	t, s = openFunc(consul.Open)
	add("consul", []string{"Token"}, true, t, s)
	t, s = openFunc(zookeeper.Open)
	add("zookeeper", userPass, true, t, s)
	t, s = openFunc(redis.Open)
	add("redis", userPass, true, t, s)
	t, s = openFunc(postgres.Open)
	add("postgres", userPass, true, t, s)
	return out
}

// Every *Store is a valkeyrie store.Store (so a leadership.Backend, whose
// calls are four of its), writes fenced, and closes.
var (
	_ vstore.Store  = (*memory.Store)(nil)
	_ vstore.Store  = (*etcd.Store)(nil)
	_ vstore.Store  = (*consul.Store)(nil)
	_ vstore.Store  = (*zookeeper.Store)(nil)
	_ vstore.Store  = (*redis.Store)(nil)
	_ vstore.Store  = (*postgres.Store)(nil)
	_ fenced.Putter = (*memory.Store)(nil)
	_ fenced.Putter = (*etcd.Store)(nil)
	_ fenced.Putter = (*consul.Store)(nil)
	_ fenced.Putter = (*zookeeper.Store)(nil)
	_ fenced.Putter = (*redis.Store)(nil)
	_ fenced.Putter = (*postgres.Store)(nil)
)

// The common fields of Config have one name and one type everywhere.
func TestConfigCommonFields(t *testing.T) {
	common := map[string]reflect.Type{
		"Endpoints":      reflect.TypeFor[[]string](),
		"TLS":            reflect.TypeFor[*tls.Config](),
		"DialTimeout":    reflect.TypeFor[time.Duration](),
		"RequestTimeout": reflect.TypeFor[time.Duration](),
		"Username":       reflect.TypeFor[string](),
		"Password":       reflect.TypeFor[string](),
		"Token":          reflect.TypeFor[string](),
	}
	for _, f := range faces() {
		if f.config.Name() != "Config" || f.config.Kind() != reflect.Struct {
			t.Errorf("%s: Open takes %v, want a struct Config", f.dir, f.config)
			continue
		}
		want := slices.Clone(f.creds)
		if f.network {
			want = append(want, "Endpoints", "TLS", "DialTimeout", "RequestTimeout")
		}
		for _, name := range want {
			sf, ok := f.config.FieldByName(name)
			switch {
			case !ok:
				t.Errorf("%s.Config has no field %s", f.dir, name)
			case sf.Type != common[name]:
				t.Errorf("%s.Config.%s is %v, want %v", f.dir, name, sf.Type, common[name])
			}
		}
		// A common name is never used for something else, nor present
		// where the backend has no such thing.
		for name, typ := range common {
			if sf, ok := f.config.FieldByName(name); ok && (sf.Type != typ || !slices.Contains(want, name)) {
				t.Errorf("%s.Config.%s (%v): not part of this backend's face", f.dir, name, sf.Type)
			}
		}
	}
}

// Every *Store has Close() error (part of store.Store, checked again here
// for the face's sake).
func TestStoreClose(t *testing.T) {
	for _, f := range faces() {
		if _, ok := f.store.(interface{ Close() error }); !ok {
			t.Errorf("%s.Store has no Close() error", f.dir)
		}
	}
}

// srcDir is the directory of the adapters (store/, the parent of this
// file's).
func srcDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

// parsed is an adapter's production source.
type parsed struct {
	files map[string]*ast.File // by base name
}

func parse(t *testing.T, dir string) parsed {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(srcDir(t), dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	p := parsed{files: map[string]*ast.File{}}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		p.files[filepath.Base(name)] = f
	}
	return p
}

// declared returns the files that declare the package-level name (a
// function, not a method; a type, var or const), sorted.
func (p parsed) declared(name string) []string {
	var in []string
	for file, f := range p.files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name == name {
					in = append(in, file)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.Name == name {
							in = append(in, file)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.Name == name {
								in = append(in, file)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(in)
	return in
}

// exportedVars returns the package's exported package-level variables.
func (p parsed) exportedVars() []string {
	var out []string
	for _, f := range p.files {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						if n.IsExported() {
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// The same files, and the same names in them, in every adapter; the
// valkeyrie-only extras in valkeyrie.go alone; none of the old faces.
func TestFileSet(t *testing.T) {
	for _, f := range faces() {
		p := parse(t, f.dir)
		for _, file := range []string{"doc.go", "config.go", "errors.go", "store.go", "valkeyrie.go"} {
			if p.files[file] == nil {
				t.Errorf("%s: no %s", f.dir, file)
			}
		}
		// A network adapter registers its URL schemes with store/open
		// in url.go, when a program imports it.
		if f.network && p.files["url.go"] == nil {
			t.Errorf("%s: no url.go (its schemes' registration with store/open)", f.dir)
		}
		for name, file := range map[string]string{"Config": "config.go", "Store": "store.go", "Open": "store.go", "StoreName": "valkeyrie.go"} {
			if got := p.declared(name); !slices.Equal(got, []string{file}) {
				t.Errorf("%s: %s declared in %v, want %s only", f.dir, name, got, file)
			}
		}
		for _, gone := range []string{"Wrap", "Scheme", "New"} {
			if got := p.declared(gone); len(got) > 0 {
				t.Errorf("%s: %s is declared (in %v): the adapters' face has none", f.dir, gone, got)
			}
		}
		for file, af := range p.files {
			for _, imp := range af.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if path == "github.com/leadership-go/leadership" {
					t.Errorf("%s/%s imports the root package", f.dir, file)
				}
				if path == "github.com/kvtools/valkeyrie" {
					t.Errorf("%s/%s imports valkeyrie's registry: valkeyrie.go registers through adapter.Register", f.dir, file)
				}
			}
		}
	}
}

// kinds is the vocabulary.
var kinds = map[string]error{
	"ErrAuth":          store.ErrAuth,
	"ErrPermission":    store.ErrPermission,
	"ErrTLS":           store.ErrTLS,
	"ErrInvalidConfig": store.ErrInvalidConfig,
	"ErrUnreachable":   store.ErrUnreachable,
	"ErrClosed":        store.ErrClosed,
}

// sentinel is one exported error variable of an adapter and the kinds of
// the vocabulary it must match (and no others).
type sentinel struct {
	err   error
	kinds []string
}

// sentinels lists every exported error variable of every adapter: a new
// one fails TestErrorVocabulary until it is listed here with its kinds.
func sentinels() map[string]map[string]sentinel {
	none := []string(nil)
	closed := []string{"ErrClosed", "ErrUnreachable"}
	return map[string]map[string]sentinel{
		"memory": {
			"ErrNoName":        {memory.ErrNoName, []string{"ErrInvalidConfig"}},
			"ErrEmptyKey":      {memory.ErrEmptyKey, none},
			"ErrClosed":        {memory.ErrClosed, closed},
			"ErrDisconnected":  {memory.ErrDisconnected, []string{"ErrUnreachable"}},
			"ErrServerDown":    {memory.ErrServerDown, []string{"ErrUnreachable"}},
			"ErrNotLocked":     {memory.ErrNotLocked, none},
			"ErrAlreadyLocked": {memory.ErrAlreadyLocked, none},
		},
		"etcd": {
			"ErrInvalidConfig":      {etcd.ErrInvalidConfig, []string{"ErrInvalidConfig"}},
			"ErrCertificateRefused": {etcd.ErrCertificateRefused, []string{"ErrTLS"}},
			"ErrAuthFailed":         {etcd.ErrAuthFailed, []string{"ErrAuth"}},
			"ErrPermissionDenied":   {etcd.ErrPermissionDenied, []string{"ErrPermission"}},
		},
		"consul": {
			"ErrInvalidConfig":     {consul.ErrInvalidConfig, []string{"ErrInvalidConfig"}},
			"ErrEmptyKey":          {consul.ErrEmptyKey, none},
			"ErrClosed":            {consul.ErrClosed, closed},
			"ErrNoLeader":          {consul.ErrNoLeader, []string{"ErrUnreachable"}},
			"ErrLockHeld":          {consul.ErrLockHeld, none},
			"ErrLockNotHeld":       {consul.ErrLockNotHeld, none},
			"ErrPermissionDenied":  {consul.ErrPermissionDenied, []string{"ErrPermission"}},
			"ErrTokenNotFound":     {consul.ErrTokenNotFound, []string{"ErrAuth"}},
			"ErrServerCertificate": {consul.ErrServerCertificate, []string{"ErrTLS"}},
			"ErrClientCertificate": {consul.ErrClientCertificate, []string{"ErrTLS"}},
		},
		"zookeeper": {
			"ErrInvalidConfig": {zookeeper.ErrInvalidConfig, []string{"ErrInvalidConfig"}},
			"ErrEmptyKey":      {zookeeper.ErrEmptyKey, none},
			"ErrClosed":        {zookeeper.ErrClosed, closed},
			"ErrPermission":    {zookeeper.ErrPermission, []string{"ErrPermission"}},
			"ErrAuthFailed":    {zookeeper.ErrAuthFailed, []string{"ErrAuth"}},
		},
		"redis": {
			"ErrInvalidConfig":     {redis.ErrInvalidConfig, []string{"ErrInvalidConfig"}},
			"ErrCreateUnconfirmed": {redis.ErrCreateUnconfirmed, []string{"ErrUnreachable"}},
			"ErrTLSRefused":        {redis.ErrTLSRefused, []string{"ErrTLS"}},
		},
		"postgres": {
			"ErrNoEndpoint":       {postgres.ErrNoEndpoint, []string{"ErrInvalidConfig"}},
			"ErrInvalidConfig":    {postgres.ErrInvalidConfig, []string{"ErrInvalidConfig"}},
			"ErrChannelMismatch":  {postgres.ErrChannelMismatch, []string{"ErrInvalidConfig"}},
			"ErrInsecure":         {postgres.ErrInsecure, []string{"ErrInvalidConfig"}},
			"ErrEmptyKey":         {postgres.ErrEmptyKey, none},
			"ErrClosed":           {postgres.ErrClosed, closed},
			"ErrNotLocked":        {postgres.ErrNotLocked, none},
			"ErrAlreadyLocked":    {postgres.ErrAlreadyLocked, none},
			"ErrAuth":             {postgres.ErrAuth, []string{"ErrAuth"}},
			"ErrTLS":              {postgres.ErrTLS, []string{"ErrTLS"}},
			"ErrPermission":       {postgres.ErrPermission, []string{"ErrPermission"}},
			"ErrSchemaIncomplete": {postgres.ErrSchemaIncomplete, []string{"ErrPermission"}},
		},
	}
}

// matches checks that err matches exactly the kinds named.
func matches(t *testing.T, what string, err error, want []string) {
	t.Helper()
	for name, kind := range kinds {
		if got := errors.Is(err, kind); got != slices.Contains(want, name) {
			t.Errorf("%s: errors.Is(%v, store.%s) = %v, want %v", what, err, name, got, !got)
		}
	}
}

// Every adapter's sentinels match the vocabulary's kinds they stand for,
// and every exported error variable is listed.
func TestErrorVocabulary(t *testing.T) {
	all := sentinels()
	for _, f := range faces() {
		listed := all[f.dir]
		for _, name := range parse(t, f.dir).exportedVars() {
			if !strings.HasPrefix(name, "Err") {
				continue
			}
			if _, ok := listed[name]; !ok {
				t.Errorf("%s.%s is not listed in sentinels(): say which kinds of store's vocabulary it matches", f.dir, name)
			}
		}
		for name, s := range listed {
			matches(t, f.dir+"."+name, s.err, s.kinds)
		}
	}
}

// The adapters' typed errors match the vocabulary too.
func TestTypedErrors(t *testing.T) {
	for what, c := range map[string]struct {
		err   error
		kinds []string
	}{
		"etcd.ConfigError":        {&etcd.ConfigError{Invalid: etcd.ErrInvalidConfig, Field: "Endpoints"}, []string{"ErrInvalidConfig"}},
		"consul.ConfigError":      {&consul.ConfigError{Invalid: consul.ErrInvalidConfig, Field: "Endpoints"}, []string{"ErrInvalidConfig"}},
		"zookeeper.ConfigError":   {&zookeeper.ConfigError{Invalid: zookeeper.ErrInvalidConfig, Field: "Endpoints"}, []string{"ErrInvalidConfig"}},
		"redis.ConfigError":       {&redis.ConfigError{Invalid: redis.ErrInvalidConfig, Field: "DB"}, []string{"ErrInvalidConfig"}},
		"postgres.ConfigError":    {&postgres.ConfigError{Invalid: postgres.ErrInvalidConfig, Field: "Table"}, []string{"ErrInvalidConfig"}},
		"etcd.UnreachableError":   {&etcd.UnreachableError{Backend: "etcd", Err: context.DeadlineExceeded}, []string{"ErrUnreachable"}},
		"consul.UnreachableError": {&consul.UnreachableError{Backend: "consul", Err: context.DeadlineExceeded}, []string{"ErrUnreachable"}},
		"consul.UnreachableError of a certificate": {&consul.UnreachableError{Backend: "consul",
			Err: &consul.CertificateError{Problem: consul.ErrServerCertificate}}, []string{"ErrUnreachable", "ErrTLS"}},
		"zookeeper.UnreachableError":           {&zookeeper.UnreachableError{Backend: "zookeeper", Err: context.DeadlineExceeded}, []string{"ErrUnreachable"}},
		"redis.UnreachableError":               {&redis.UnreachableError{Backend: "redis", Err: context.DeadlineExceeded}, []string{"ErrUnreachable"}},
		"postgres.UnreachableError":            {&postgres.UnreachableError{Backend: "postgres", Err: context.DeadlineExceeded}, []string{"ErrUnreachable"}},
		"consul.ACLError denied":               {&consul.ACLError{Op: "get", Err: consul.ErrPermissionDenied}, []string{"ErrPermission"}},
		"consul.ACLError unknown token":        {&consul.ACLError{Op: "open", Err: consul.ErrTokenNotFound}, []string{"ErrAuth"}},
		"consul.CertificateError server":       {&consul.CertificateError{Problem: consul.ErrServerCertificate}, []string{"ErrTLS"}},
		"consul.CertificateError client":       {&consul.CertificateError{Problem: consul.ErrClientCertificate}, []string{"ErrTLS"}},
		"zookeeper.AccessError":                {&zookeeper.AccessError{Op: "get"}, []string{"ErrPermission"}},
		"zookeeper.AccessError wrong password": {&zookeeper.AccessError{Op: "get", WrongPassword: true}, []string{"ErrPermission", "ErrAuth"}},
		"postgres.RefusedError auth":           {&postgres.RefusedError{Op: "connect", Kind: postgres.ErrAuth}, []string{"ErrAuth"}},
		"postgres.RefusedError TLS":            {&postgres.RefusedError{Op: "connect", Kind: postgres.ErrTLS}, []string{"ErrTLS"}},
		"postgres.RefusedError permission":     {&postgres.RefusedError{Op: "put", Kind: postgres.ErrPermission}, []string{"ErrPermission"}},
		"postgres.RefusedError schema":         {&postgres.RefusedError{Op: "open", Kind: postgres.ErrSchemaIncomplete}, []string{"ErrPermission"}},
	} {
		matches(t, what, c.err, c.kinds)
	}
}

// ErrUnreachable is valkeyrie's ErrNotReachable: the engine's checks of
// the one hold for the other.
func TestUnreachableIsValkeyries(t *testing.T) {
	if store.ErrUnreachable != vstore.ErrNotReachable { //nolint:errorlint // the same value, on purpose
		t.Fatal("store.ErrUnreachable is not valkeyrie's store.ErrNotReachable")
	}
}
