package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// consumer is a program outside the repository on one backend: its
// imports, and the packages of the backend's own client alone, to compare
// module graphs with.
type consumer struct {
	name    string
	adapter string   // the adapter's directory below the root ("" for memory)
	client  []string // the backend client's packages, imported alone
}

var consumers = []consumer{
	{"memory", "", nil},
	{"etcd", "store/etcd", []string{"go.etcd.io/etcd/client/v3"}},
	{"consul", "store/consul", []string{"github.com/hashicorp/consul/api"}},
	{"zookeeper", "store/zookeeper", []string{"github.com/go-zookeeper/zk"}},
	{"redis", "store/redis", []string{"github.com/redis/go-redis/v9"}},
	{"postgres", "store/postgres", []string{"github.com/jackc/pgx/v5/pgxpool"}},
	{"kubernetes", "store/kubernetes", []string{"k8s.io/client-go/kubernetes"}},
}

// otherBackends are module path prefixes of every backend's client: a
// consumer's graph holds only its own backend's.
var otherBackends = map[string][]string{
	"etcd":       {"go.etcd.io/", "github.com/kvtools/etcdv3", "google.golang.org/grpc"},
	"consul":     {"github.com/hashicorp/", "github.com/kvtools/consul"},
	"zookeeper":  {"github.com/go-zookeeper/", "github.com/kvtools/zookeeper"},
	"redis":      {"github.com/redis/", "github.com/kvtools/redis"},
	"postgres":   {"github.com/jackc/"},
	"kubernetes": {"k8s.io/"},
	"metrics":    {"github.com/prometheus/", "go.opentelemetry.io/"},
}

// TestConsumers publishes every released module at VERSION into a
// file-system module proxy and, from modules outside the repository with
// GOWORK=off, builds a program per backend, compares its module graph
// with the backend's client alone, and installs the command at VERSION.
// It needs the usual module proxy (or a warm module cache) for the
// third-party modules; -short skips it.
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
	// program writes a module importing pkgs, requiring reqs, and
	// returns its graph (go list -m all) and the modules it links.
	program := func(name string, reqs map[string]string, pkgs []string) (graph, linked []string) {
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
		var src strings.Builder
		src.WriteString("package main\n\nimport (\n")
		for _, p := range pkgs {
			fmt.Fprintf(&src, "\t_ %q\n", p)
		}
		src.WriteString(")\n\nfunc main() {}\n")
		if err := os.WriteFile(filepath.Join(wd, "go.mod"), gomod, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(wd, "main.go"), []byte(src.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		goIn(wd, "mod", "tidy")
		goIn(wd, "build", "-o", os.DevNull, ".")
		graph = strings.Fields(goIn(wd, "list", "-m", "-f", "{{.Path}}", "all"))[1:]
		linked = strings.Fields(goIn(wd, "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}{{end}}{{end}}", "."))
		slices.Sort(linked)
		return graph, slices.Compact(linked)
	}
	rows := []string{"| backend | modules in the consumer's graph | in the client's alone | beyond the client, linked | beyond the client, for tests only |", "|---|---|---|---|---|"}
	for _, c := range consumers {
		imports := []string{modulePrefix, modulePrefix + "/store/open"}
		reqs := map[string]string{modulePrefix: version}
		if c.adapter != "" {
			imports = append(imports, modulePrefix+"/"+c.adapter)
			reqs[modulePrefix+"/"+c.adapter] = version
		}
		graph, linked := program(c.name, reqs, imports)
		clientGraph := []string{}
		if len(c.client) > 0 {
			adapterMod, err := os.ReadFile(filepath.Join(root, c.adapter, "go.mod"))
			if err != nil {
				t.Fatal(err)
			}
			af, err := modfile.Parse("go.mod", adapterMod, nil)
			if err != nil {
				t.Fatal(err)
			}
			creqs := map[string]string{}
			for _, r := range af.Require {
				for _, p := range c.client {
					if strings.HasPrefix(p, r.Mod.Path) && !r.Indirect {
						creqs[r.Mod.Path] = r.Mod.Version
					}
				}
			}
			clientGraph, _ = program(c.name+"-client", creqs, c.client)
		}
		for other, prefixes := range otherBackends {
			if other == c.name {
				continue
			}
			for _, m := range graph {
				if slices.Contains(clientGraph, m) {
					continue // the backend's client needs it too
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
