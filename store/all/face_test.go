package all_test

// The one face of the adapters (issue 24): every adapter under store/ is
// held to it here, by its types (compiled against this file) and by its
// source (parsed with go/parser). store/kubernetes (issue 33), whose
// Config has none of the network fields, is held to the exported-names
// rule with the others and to the rest that fits it in TestKubernetesFace.

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
	"github.com/leadership-go/leadership/store/kubernetes"
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
	// where is the Config field that names the servers: Endpoints, or
	// PostgreSQL's DSN (a store.Secret), which pgx users know and which
	// its URL is; "" for memory.
	where string
}

// openFunc makes sure, at compile time, that every adapter's Open is
// func(context.Context, Config) (*Store, error).
func openFunc[C any, S any](_ func(context.Context, C) (*S, error)) (reflect.Type, any) {
	return reflect.TypeFor[C](), (*S)(nil)
}

func faces() []face {
	userPass := []string{"Username", "Password"}
	var out []face
	add := func(dir string, creds []string, where string, cfg reflect.Type, s any) {
		out = append(out, face{dir: dir, config: cfg, store: s, creds: creds, network: where != "", where: where})
	}
	t, s := openFunc(memory.Open)
	add("memory", nil, "", t, s)
	t, s = openFunc(etcd.Open)
	add("etcd", userPass, "Endpoints", t, s)
	t, s = openFunc(consul.Open)
	add("consul", []string{"Token"}, "Endpoints", t, s)
	t, s = openFunc(zookeeper.Open)
	add("zookeeper", userPass, "Endpoints", t, s)
	t, s = openFunc(redis.Open)
	add("redis", userPass, "Endpoints", t, s)
	t, s = openFunc(postgres.Open)
	add("postgres", userPass, "DSN", t, s)
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
	_ vstore.Store  = (*kubernetes.Store)(nil)
	_ fenced.Putter = (*memory.Store)(nil)
	_ fenced.Putter = (*etcd.Store)(nil)
	_ fenced.Putter = (*consul.Store)(nil)
	_ fenced.Putter = (*zookeeper.Store)(nil)
	_ fenced.Putter = (*redis.Store)(nil)
	_ fenced.Putter = (*postgres.Store)(nil)
)

// The common fields of Config have one name and one type everywhere, and
// one field says where the servers are.
func TestConfigCommonFields(t *testing.T) {
	common := map[string]reflect.Type{
		"Endpoints":      reflect.TypeFor[[]string](),
		"TLS":            reflect.TypeFor[*tls.Config](),
		"DialTimeout":    reflect.TypeFor[time.Duration](),
		"RequestTimeout": reflect.TypeFor[time.Duration](),
		"Username":       reflect.TypeFor[string](),
		"Password":       reflect.TypeFor[store.Secret](), // the one masking type
		"Token":          reflect.TypeFor[store.Secret](),
		"DSN":            reflect.TypeFor[store.Secret](),
	}
	for _, f := range faces() {
		if f.config.Name() != "Config" || f.config.Kind() != reflect.Struct {
			t.Errorf("%s: Open takes %v, want a struct Config", f.dir, f.config)
			continue
		}
		want := slices.Clone(f.creds)
		if f.network {
			want = append(want, f.where, "TLS", "DialTimeout", "RequestTimeout")
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

// detail is the one error type each adapter may export beside the shared
// vocabulary of package store, with the server's details: none for
// memory, etcd and Redis.
var detail = map[string]string{
	"kubernetes": "Error",       // the call, namespace, Lease and key, and the API server's status
	"consul":     "ACLError",    // the right the token lacks, or an unknown token
	"zookeeper":  "AccessError", // the node and right refused
	"postgres":   "RefusedError",
}

// storeExtras are the methods a *Store may export beside valkeyrie's
// store.Store, FencedPut and Close, each with the reason it is there; the
// list only shrinks. Test faults are not among them (internal/memfault).
var storeExtras = map[string]map[string]string{
	"memory": {
		"Name":   "the backend the handle shares with others of its name",
		"MinTTL": "the smallest TTL honoured, which the engine reads (leadership.Backend)",
	},
	"postgres": {
		"MinTTL":      "the smallest TTL honoured, which the engine reads (leadership.Backend)",
		"Table":       "the quoted table name, for grants and diagnostics",
		"Channel":     "the NOTIFY channel, for grants and diagnostics",
		"ListenerPID": "the listener's server process, for pg_stat_activity",
	},
}

// storeMethod reports whether the *Store of the adapter in dir may export
// method.
func storeMethod(dir, method string) bool {
	if _, ok := reflect.TypeFor[vstore.Store]().MethodByName(method); ok {
		return true
	}
	return method == "FencedPut" || method == "Close" || storeExtras[dir][method] != ""
}

// exported returns the package's exported names, as go/doc would list
// them: funcs, types, vars and consts, and the methods of exported types
// as TYPE.METHOD.
func (p parsed) exported() []string {
	var out []string
	for _, f := range p.files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					out = append(out, d.Name.Name)
					continue
				}
				recv := d.Recv.List[0].Type
				if st, ok := recv.(*ast.StarExpr); ok {
					recv = st.X
				}
				if id, ok := recv.(*ast.Ident); ok && id.IsExported() {
					out = append(out, id.Name+"."+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							out = append(out, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								out = append(out, n.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// The adapters export Open, Config (no methods: its secrets mask
// themselves), Store (with valkeyrie's methods, FencedPut, Close and the
// few of storeExtras), StoreName, and at most one detail error type (with
// its Error, Unwrap and Is): their errors are the shared vocabulary of
// package store, matched with errors.Is, and their test faults are
// internal (internal/memfault).
//
// store/kubernetes, a module whose Config has no Endpoints, TLS or
// credentials (the kubeconfig holds them) and whose Store does not write
// fenced, is held to this rule too, by its source; TestKubernetesFace
// checks the rest that fits it.
func TestExportedNames(t *testing.T) {
	dirs := []string{"kubernetes"}
	for _, f := range faces() {
		dirs = append(dirs, f.dir)
	}
	for _, dir := range dirs {
		f := face{dir: dir}
		allowed := func(name string) bool {
			typ, method, isMethod := strings.Cut(name, ".")
			switch {
			case !isMethod && slices.Contains([]string{"Open", "Config", "Store", "StoreName"}, name):
				return true
			case typ == "Store":
				return !isMethod || storeMethod(f.dir, method)
			case typ == detail[f.dir] && (!isMethod || slices.Contains([]string{"Error", "Unwrap", "Is"}, method)):
				return true
			}
			return false
		}
		for _, name := range parse(t, f.dir).exported() {
			if !allowed(name) {
				t.Errorf("%s exports %s: an adapter exports Open, Config, Store (valkeyrie's methods, FencedPut, Close and storeExtras), StoreName and at most one detail error type (%q); errors are store's vocabulary, test faults internal/memfault's", f.dir, name, detail[f.dir])
			}
		}
	}
}

// store/kubernetes's face, as far as it fits the others': Open takes a
// Config and returns a *Store (compiled below), the Config's timeouts are
// the common fields, and the source is laid out as the others' (config.go,
// errors.go, url.go, doc.go), with Store and Open in kubernetes.go. It
// registers with store/open only, not with valkeyrie (no StoreName).
func TestKubernetesFace(t *testing.T) {
	cfg, _ := openFunc(kubernetes.Open)
	for name, typ := range map[string]reflect.Type{
		"DialTimeout":    reflect.TypeFor[time.Duration](),
		"RequestTimeout": reflect.TypeFor[time.Duration](),
	} {
		if sf, ok := cfg.FieldByName(name); !ok || sf.Type != typ {
			t.Errorf("kubernetes.Config.%s: %v, %v; want a %v", name, sf.Type, ok, typ)
		}
	}
	for _, name := range []string{"Endpoints", "TLS", "Username", "Password", "Token"} {
		if _, ok := cfg.FieldByName(name); ok {
			t.Errorf("kubernetes.Config.%s: the kubeconfig, not the Config, names the server and the credentials", name)
		}
	}
	p := parse(t, "kubernetes")
	for _, file := range []string{"doc.go", "config.go", "errors.go", "url.go", "kubernetes.go"} {
		if p.files[file] == nil {
			t.Errorf("kubernetes: no %s", file)
		}
	}
	for name, file := range map[string]string{"Config": "config.go", "Store": "kubernetes.go", "Open": "kubernetes.go", "Error": "errors.go"} {
		if got := p.declared(name); !slices.Equal(got, []string{file}) {
			t.Errorf("kubernetes: %s declared in %v, want %s only", name, got, file)
		}
	}
	for _, gone := range []string{"Wrap", "Scheme", "New", "ParseURL", "StoreName"} {
		if got := p.declared(gone); len(got) > 0 {
			t.Errorf("kubernetes: %s is declared (in %v): not part of its face", gone, got)
		}
	}
	for file, af := range p.files {
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == "github.com/leadership-go/leadership" || path == "github.com/kvtools/valkeyrie" {
				t.Errorf("kubernetes/%s imports %s", file, path)
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
	"ErrInvalidKey":    store.ErrInvalidKey,
	"ErrAlreadyLocked": store.ErrAlreadyLocked,
	"ErrNotLocked":     store.ErrNotLocked,
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

// The vocabulary's kinds are distinct, and the shared *ConfigError and
// the detail types match the kinds they carry.
func TestTypedErrors(t *testing.T) {
	for name, kind := range kinds {
		matches(t, "store."+name, kind, []string{name})
	}
	for what, c := range map[string]struct {
		err   error
		kinds []string
	}{
		"store.ConfigError":                     {&store.ConfigError{Field: "Endpoints"}, []string{"ErrInvalidConfig"}},
		"store.ConfigError of an unusable file": {&store.ConfigError{Field: "TLS", Err: os.ErrNotExist}, []string{"ErrInvalidConfig"}},
		"consul.ACLError":                       {&consul.ACLError{Op: "get", Err: store.ErrPermission}, []string{"ErrPermission"}},
		"zookeeper.AccessError":                 {&zookeeper.AccessError{Op: "get"}, []string{"ErrPermission"}},
		"zookeeper.AccessError wrong password":  {&zookeeper.AccessError{Op: "get", WrongPassword: true}, []string{"ErrPermission", "ErrAuth"}},
		"postgres.RefusedError auth":            {&postgres.RefusedError{Op: "connect", Kind: store.ErrAuth}, []string{"ErrAuth"}},
		"kubernetes.Error":                      {&kubernetes.Error{Op: "get", Kind: store.ErrPermission}, []string{"ErrPermission"}},
	} {
		matches(t, what, c.err, c.kinds)
	}
	var ce *store.ConfigError
	if err := error(&store.ConfigError{Field: "TLS", Err: os.ErrNotExist}); !errors.Is(err, os.ErrNotExist) || !errors.As(err, &ce) {
		t.Errorf("store.ConfigError: Err not reachable: %v", err)
	}
}

// ErrUnreachable is valkeyrie's ErrNotReachable: the engine's checks of
// the one hold for the other.
func TestUnreachableIsValkeyries(t *testing.T) {
	if store.ErrUnreachable != vstore.ErrNotReachable { //nolint:errorlint // the same value, on purpose
		t.Fatal("store.ErrUnreachable is not valkeyrie's store.ErrNotReachable")
	}
}
