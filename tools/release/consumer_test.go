package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"
)

// consumer is a program outside the repository: the modules of the
// repository it requires and the packages it imports beyond the root
// package, store and store/open, its metrics (a file of
// testdata/consumer/metrics), the packages of its backend's client alone
// (to compare module graphs with), the backends (otherBackends' keys)
// whose modules its graph may hold, and the checks its program runs
// (testdata/consumer/main.go: WANT URL pairs; KUBECONFIG in a URL is a
// kubeconfig naming a server where nothing listens).
type consumer struct {
	name    string
	modules []string // directories below the root, beyond the root module
	imports []string
	metrics string // none, prometheus or otel
	client  []string
	holds   []string
	checks  []string
}

// adapters are the directories of the network backends' adapters.
var adapters = []string{"store/etcd", "store/consul", "store/zookeeper", "store/redis", "store/postgres", "store/kubernetes"}

// clients are the packages of each network backend's client, by adapter
// directory.
var clients = map[string][]string{
	"store/etcd":       {"go.etcd.io/etcd/client/v3"},
	"store/consul":     {"github.com/hashicorp/consul/api"},
	"store/zookeeper":  {"github.com/go-zookeeper/zk"},
	"store/redis":      {"github.com/redis/go-redis/v9"},
	"store/postgres":   {"github.com/jackc/pgx/v5/pgxpool"},
	"store/kubernetes": {"k8s.io/client-go/kubernetes"},
}

// onAdapter is the consumer of one network backend: it imports the
// adapter alone, and its program gets store.ErrUnreachable opening url
// (nothing listens on 127.0.0.1:1) and open.ErrBackendLeftOut opening
// another backend's URL.
func onAdapter(name, url, other string) consumer {
	dir := "store/" + name
	return consumer{name: name, modules: []string{dir}, imports: []string{modulePrefix + "/" + dir}, metrics: "none",
		client: clients[dir], holds: []string{name}, checks: []string{"unreachable", url, "left-out", other}}
}

var consumers = []consumer{
	{name: "memory", metrics: "none", checks: []string{"elect", "memory://consumer-memory", "left-out", "etcd://127.0.0.1:1"}},
	onAdapter("etcd", "etcd://127.0.0.1:1?dial_timeout=2s", "zk://127.0.0.1:1"),
	onAdapter("consul", "consul://127.0.0.1:1?dial_timeout=2s", "etcd://127.0.0.1:1"),
	onAdapter("zookeeper", "zk://127.0.0.1:1?dial_timeout=2s", "etcd://127.0.0.1:1"),
	onAdapter("redis", "redis://127.0.0.1:1?dial_timeout=2s", "etcd://127.0.0.1:1"),
	onAdapter("postgres", "postgres://u@127.0.0.1:1/x?sslmode=disable&dial_timeout=2s", "etcd://127.0.0.1:1"),
	onAdapter("kubernetes", "k8s://default?kubeconfig=KUBECONFIG&dial_timeout=2s", "etcd://127.0.0.1:1"),
	{name: "prometheus", modules: []string{"metrics/prometheus"}, imports: []string{modulePrefix + "/metrics/prometheus"},
		metrics: "prometheus", client: []string{"github.com/prometheus/client_golang/prometheus"}, holds: []string{"prometheus"},
		checks: []string{"elect", "memory://consumer-prometheus", "left-out", "etcd://127.0.0.1:1"}},
	{name: "otel", modules: []string{"metrics/otel"}, imports: []string{modulePrefix + "/metrics/otel"},
		metrics: "otel", client: []string{"go.opentelemetry.io/otel/metric", "go.opentelemetry.io/otel/sdk/metric"}, holds: []string{"otel"},
		checks: []string{"elect", "memory://consumer-otel", "left-out", "etcd://127.0.0.1:1"}},
	func() consumer {
		c := consumer{name: "all", modules: []string{"store/all"}, imports: []string{modulePrefix + "/store/all"}, metrics: "none",
			holds:  []string{"etcd", "consul", "zookeeper", "redis", "postgres", "kubernetes"},
			checks: []string{"elect", "memory://consumer-all", "unknown-scheme", "bogus://127.0.0.1:1"}}
		for _, a := range adapters {
			c.modules = append(c.modules, a)
			c.client = append(c.client, clients[a]...)
		}
		for _, scheme := range []string{"etcd", "consul", "zk", "zookeeper", "redis", "rediss", "postgres", "postgresql", "k8s"} {
			c.checks = append(c.checks, "scheme", scheme)
		}
		return c
	}(),
}

// otherBackends are module path prefixes of every backend's client and
// every metrics bridge's: a consumer's graph holds only those of its own
// (consumer.holds), or those its own client needs too.
var otherBackends = map[string][]string{
	"etcd":       {"go.etcd.io/", "github.com/kvtools/etcdv3", "google.golang.org/grpc"},
	"consul":     {"github.com/hashicorp/", "github.com/kvtools/consul"},
	"zookeeper":  {"github.com/go-zookeeper/", "github.com/kvtools/zookeeper"},
	"redis":      {"github.com/redis/", "github.com/kvtools/redis"},
	"postgres":   {"github.com/jackc/"},
	"kubernetes": {"k8s.io/"},
	"prometheus": {"github.com/prometheus/"},
	"otel":       {"go.opentelemetry.io/"},
}

// kubeconfig names an API server where nothing listens.
const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster:
    server: https://127.0.0.1:1
users:
- name: nobody
  user:
    token: not-a-token
contexts:
- name: nowhere
  context:
    cluster: nowhere
    user: nobody
    namespace: default
current-context: nowhere
`

// TestConsumers publishes every released module at VERSION into a
// file-system module proxy and, from modules outside the repository with
// GOWORK=off, builds a program per backend, per metrics bridge and on
// store/all, runs it (each opens its backend by URL through store/open and
// gets the typed error, or elects a leader on memory://), compares its
// module graph with its client's alone, and installs the command at
// VERSION. It needs the usual module proxy (or a warm module cache) for
// the third-party modules; -short skips it.
func TestConsumers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the consumer test builds every backend from a module proxy")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	v, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(v))
	dir := t.TempDir()
	if err := writeProxy(root, version, filepath.Join(dir, "proxy")); err != nil {
		t.Fatal(err)
	}
	upstream, err := exec.Command(goTool, "env", "GOPROXY").Output()
	if err != nil {
		t.Fatal(err)
	}
	cache, err := exec.Command(goTool, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"GOWORK=off", "GOFLAGS=-mod=mod", "GONOSUMDB=github.com/leadership-go",
		"GOMODCACHE="+filepath.Join(dir, "modcache"),
		"GOPROXY=file://"+filepath.Join(dir, "proxy")+",file://"+strings.TrimSpace(string(cache))+"/cache/download,"+strings.TrimSpace(string(upstream)))
	// The module cache is read-only: let TempDir remove it.
	t.Cleanup(func() { exec.Command("chmod", "-R", "u+w", dir).Run() })
	goIn := func(wd string, args ...string) string {
		t.Helper()
		cmd := exec.Command(goTool, args...)
		cmd.Dir, cmd.Env = wd, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s (in %s): %v\n%s", strings.Join(args, " "), wd, err, out)
		}
		return string(out)
	}
	kubeconfigFile := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfigFile, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	// program writes a module requiring reqs, of the files srcs (name:
	// content), builds it, and returns its graph (go list -m all), the
	// modules it links and the binary.
	program := func(name string, reqs map[string]string, srcs map[string]string) (graph, linked []string, bin string) {
		t.Helper()
		wd := filepath.Join(dir, name)
		if err := os.MkdirAll(wd, 0o755); err != nil {
			t.Fatal(err)
		}
		f := &modfile.File{}
		f.AddModuleStmt("example.com/" + name)
		f.AddGoStmt("1.25.9")
		for p, v := range reqs {
			f.AddNewRequire(p, v, false)
		}
		gomod, err := f.Format()
		if err != nil {
			t.Fatal(err)
		}
		srcs["go.mod"] = string(gomod)
		for n, content := range srcs {
			if err := os.WriteFile(filepath.Join(wd, n), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		goIn(wd, "mod", "tidy")
		bin = filepath.Join(wd, name)
		goIn(wd, "build", "-o", bin, ".")
		graph = strings.Fields(goIn(wd, "list", "-m", "-f", "{{.Path}}", "all"))[1:]
		linked = strings.Fields(goIn(wd, "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}{{end}}{{end}}", "."))
		slices.Sort(linked)
		return graph, slices.Compact(linked), bin
	}
	// imports is a Go file of blank imports.
	imports := func(pkgs []string) string {
		var src strings.Builder
		src.WriteString("package main\n\nimport (\n")
		for _, p := range pkgs {
			fmt.Fprintf(&src, "\t_ %q\n", p)
		}
		src.WriteString(")\n")
		return src.String()
	}
	testdata := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("testdata", "consumer", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	rows := []string{"| consumer | modules in the consumer's graph | in the client's alone | beyond the client, linked | beyond the client, for tests only |", "|---|---|---|---|---|"}
	for _, c := range consumers {
		reqs := map[string]string{modulePrefix: version}
		for _, m := range c.modules {
			reqs[modulePrefix+"/"+m] = version
		}
		graph, linked, bin := program(c.name, reqs, map[string]string{
			"main.go":    testdata("main.go"),
			"metrics.go": testdata("metrics/" + c.metrics + ".go"),
			"imports.go": imports(append([]string{modulePrefix, modulePrefix + "/store", modulePrefix + "/store/open"}, c.imports...)),
		})

		// The program, run: each check (testdata/consumer/main.go) passes.
		args := slices.Clone(c.checks)
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], "KUBECONFIG", kubeconfigFile)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("%s: %s %s: %v\n%s", c.name, c.name, strings.Join(args, " "), err, out)
		} else {
			t.Logf("%s: the program says:\n%s", c.name, out)
		}

		// The client alone, at the versions the modules require.
		clientGraph := []string{}
		if len(c.client) > 0 {
			creqs := map[string]string{}
			for _, m := range c.modules {
				data, err := os.ReadFile(filepath.Join(root, m, "go.mod"))
				if err != nil {
					t.Fatal(err)
				}
				mf, err := modfile.Parse("go.mod", data, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range mf.Require {
					for _, p := range c.client {
						if !r.Indirect && (p == r.Mod.Path || strings.HasPrefix(p, r.Mod.Path+"/")) {
							creqs[r.Mod.Path] = r.Mod.Version
						}
					}
				}
			}
			clientGraph, _, _ = program(c.name+"-client", creqs, map[string]string{
				"main.go": imports(c.client) + "\nfunc main() {}\n",
			})
		}
		// Every module the consumer requires is in its graph (store/all's:
		// every adapter).
		for _, m := range c.modules {
			if !slices.Contains(graph, modulePrefix+"/"+m) {
				t.Errorf("%s: the consumer's graph lacks %s", c.name, modulePrefix+"/"+m)
			}
		}
		for other, prefixes := range otherBackends {
			if slices.Contains(c.holds, other) {
				continue
			}
			for _, m := range graph {
				if slices.Contains(clientGraph, m) {
					continue // the client needs it too
				}
				for _, p := range prefixes {
					if strings.HasPrefix(m, p) {
						t.Errorf("%s: the consumer's graph holds %s, a module of %s", c.name, m, other)
					}
				}
			}
		}
		// What the library adds to the client's graph: linked into the
		// program, only the library's modules, valkeyrie (the store
		// interface), kvtools' own store for the backend (which the
		// adapter fixes) and robfig/cron (relinquish schedules); the
		// rest is there only for tests of the modules required.
		var linkedExtra, testOnly []string
		for _, m := range graph {
			if slices.Contains(clientGraph, m) {
				continue
			}
			if !slices.Contains(linked, m) {
				testOnly = append(testOnly, m)
				continue
			}
			linkedExtra = append(linkedExtra, m)
			if !strings.HasPrefix(m, modulePrefix) && m != "github.com/kvtools/valkeyrie" &&
				m != "github.com/robfig/cron/v3" && !strings.HasPrefix(m, "github.com/kvtools/") {
				t.Errorf("%s: the program links %s, which neither the library nor %s's client needs", c.name, m, c.name)
			}
		}
		short := func(ms []string) string {
			for i, m := range ms {
				ms[i] = strings.Replace(m, modulePrefix, "…", 1)
			}
			return strings.Join(ms, ", ")
		}
		rows = append(rows, fmt.Sprintf("| %s | %d | %d | %s | %s |", c.name, len(graph), len(clientGraph), short(linkedExtra), short(testOnly)))
	}
	t.Logf("consumers at %s (docs/backends.md, \"What an import costs\"):\n%s", version, strings.Join(rows, "\n"))

	// go install at the version, and the version it reports.
	bin := filepath.Join(dir, "bin")
	env = append(env, "GOBIN="+bin)
	goIn(dir, "install", modulePrefix+"/cmd/leadership@"+version)
	out, err := exec.Command(filepath.Join(bin, "leadership"), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), version) {
		t.Fatalf("leadership version: %v %q, want %s", err, out, version)
	}
	t.Logf("go install %s/cmd/leadership@%s: leadership version says %q", modulePrefix, version, strings.TrimSpace(string(out)))
}
