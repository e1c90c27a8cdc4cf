package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/leadership-go/leadership/store/open"
)

// What a store's server counts of the requests it serves, beside the calls
// the bench's handle makes (count.go): a watch that the client multiplexes,
// a keepalive on a stream, a session's own traffic and a blocking query
// are requests only the server sees. Each backend's probe reads its
// server's own figures:
//
//   - etcd: /metrics, gRPC calls handled (unary) and stream messages
//     received (LeaseKeepAlive, Watch), by method;
//   - Redis: INFO commandstats, calls by command (the probe's own INFO
//     calls left out);
//   - PostgreSQL: pg_stat_database, transactions of the database (each
//     statement outside a transaction is one; the probe's own query left
//     out);
//   - Consul: the agent's /v1/agent/metrics in Prometheus format (the
//     agent keeps it with telemetry.prometheus_retention_time, which
//     scripts/servers.sh sets), HTTP requests by method;
//   - ZooKeeper: mntr, packets received, summed over the members;
//   - Kubernetes: the API server's /metrics, requests by verb.
//
// and the CPU time of the server's processes (serverproc_linux.go).

// serverSample is one reading of a server's counters.
type serverSample struct {
	requests map[string]int64 // by kind
	cpu      time.Duration    // the server's processes, since they started
	cpuErr   error
}

// serverDelta is what a server did between two samples, per minute.
type serverDelta struct {
	RequestsPerMin float64          `json:"server_requests_per_min"`
	ByKind         map[string]int64 `json:"server_requests_by_kind_per_min"`
	CPUPerMin      float64          `json:"server_cpu_s_per_min"` // CPU seconds a minute; -1 when unknown
}

// serverProbe reads one backend's server.
type serverProbe struct {
	name   string
	ports  []int
	pids   []int
	read   func(ctx context.Context) (map[string]int64, error)
	own    map[string]int64 // requests the probe's read itself adds, by kind
	closer func()
}

// newServerProbe returns the probe of a backend's server, nil when it has
// none (the memory store), or an error when it cannot read its counts.
func newServerProbe(ctx context.Context, be *backend) (*serverProbe, error) {
	if be.scheme == "memory" {
		return nil, nil // an embedded store: no server
	}
	var spec *open.Spec
	if be.scheme != kubeScheme {
		s, err := open.Parse(be.url)
		if err != nil {
			return nil, err
		}
		spec = s
	}
	p := &serverProbe{name: be.name, closer: func() {}}
	var err error
	switch be.scheme {
	case "etcd":
		err = p.etcd(spec)
	case "redis":
		err = p.redis(spec)
	case "postgres", "postgresql":
		err = p.postgres(ctx, be.url)
	case "consul":
		err = p.consul(spec)
	case "zk", "zookeeper":
		err = p.zookeeper(spec)
	case kubeScheme:
		err = p.kube(be.url)
	default:
		err = fmt.Errorf("%s: no server probe for scheme %q", be.name, be.scheme)
	}
	if err != nil {
		return nil, err
	}
	if p.pids, err = listeners(p.ports); err != nil {
		p.pids = nil // the requests are still counted
	}
	if _, err := p.read(ctx); err != nil {
		p.closer()
		return nil, fmt.Errorf("%s: server counts: %w", be.name, err)
	}
	return p, nil
}

func (p *serverProbe) close() {
	if p != nil {
		p.closer()
		probeHTTP.CloseIdleConnections()
	}
}

// sample reads the server's counters and CPU time.
func (p *serverProbe) sample(ctx context.Context) (serverSample, error) {
	reqs, err := p.read(ctx)
	if err != nil {
		return serverSample{}, err
	}
	s := serverSample{requests: reqs}
	if p.pids == nil {
		s.cpuErr = fmt.Errorf("no process found listening on %v", p.ports)
	} else {
		s.cpu, s.cpuErr = treeCPU(p.pids)
	}
	return s, nil
}

// delta returns what happened between a and b, over took, per minute,
// less the probe's own requests (one read at the end of the window).
func (p *serverProbe) delta(a, b serverSample, took time.Duration) serverDelta {
	perMin := func(n float64) float64 { return n * float64(time.Minute) / float64(took) }
	d := serverDelta{ByKind: map[string]int64{}, CPUPerMin: -1}
	var total int64
	for k, v := range b.requests {
		n := v - a.requests[k] - p.own[k]
		if n <= 0 {
			continue
		}
		total += n
		d.ByKind[k] = int64(perMin(float64(n)) + 0.5)
	}
	d.RequestsPerMin = perMin(float64(total))
	if a.cpuErr == nil && b.cpuErr == nil {
		d.CPUPerMin = perMin((b.cpu - a.cpu).Seconds())
	}
	return d
}

// String is the table cell of d: requests a minute (the largest kinds),
// then CPU.
func (d serverDelta) String() string {
	kinds := slices.SortedFunc(maps.Keys(d.ByKind), func(a, b string) int { return int(d.ByKind[b] - d.ByKind[a]) })
	var parts []string
	for i, k := range kinds {
		if i == 4 {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", k, d.ByKind[k]))
	}
	s := fmt.Sprintf("%.0f", d.RequestsPerMin)
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// CPU is the table cell of the server's CPU seconds a minute.
func (d serverDelta) CPU() string {
	if d.CPUPerMin < 0 {
		return "?"
	}
	return fmt.Sprintf("%.1f", d.CPUPerMin)
}

func ports(endpoints []string) ([]int, error) {
	var out []int
	for _, ep := range endpoints {
		_, port, err := net.SplitHostPort(ep)
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(port)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

var probeHTTP = &http.Client{Timeout: 10 * time.Second}

// httpGet returns the body of a GET, refusing an answer other than 200.
func httpGet(ctx context.Context, c *http.Client, u string, header http.Header) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	maps.Copy(req.Header, header)
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return b, nil
}

// promSum sums, in a Prometheus text exposition, the samples of metric by
// the value of label (kinds get prefix before the label's value).
func promSum(text []byte, metric, label, prefix string, filter func(labels string) bool, into map[string]int64) {
	sc := bufio.NewScanner(strings.NewReader(string(text)))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, metric)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		labels, value := "", rest
		if strings.HasPrefix(rest, "{") {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				continue
			}
			labels, value = rest[1:end], rest[end+1:]
		}
		if filter != nil && !filter(labels) {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		into[prefix+labelValue(labels, label)] += int64(v)
	}
}

// labelValue returns the value of one label in a Prometheus label list.
func labelValue(labels, name string) string {
	i := strings.Index(labels, name+`="`)
	if i < 0 {
		return "?"
	}
	v := labels[i+len(name)+2:]
	if j := strings.IndexByte(v, '"'); j >= 0 {
		v = v[:j]
	}
	return v
}

func (p *serverProbe) etcd(spec *open.Spec) error {
	var err error
	if p.ports, err = ports(spec.Endpoints); err != nil {
		return err
	}
	if spec.HasAuth || spec.Params.Get("tls") != "" || spec.Params.Get("ca") != "" {
		return fmt.Errorf("%s: the probe reads /metrics over plain HTTP: not with TLS or authentication", p.name)
	}
	p.own = map[string]int64{}
	p.read = func(ctx context.Context) (map[string]int64, error) {
		out := map[string]int64{}
		for _, ep := range spec.Endpoints {
			b, err := httpGet(ctx, probeHTTP, "http://"+ep+"/metrics", nil)
			if err != nil {
				return nil, err
			}
			promSum(b, "grpc_server_handled_total", "grpc_method", "", func(l string) bool { return strings.Contains(l, `grpc_type="unary"`) }, out)
			promSum(b, "grpc_server_msg_received_total", "grpc_method", "stream ", func(l string) bool { return !strings.Contains(l, `grpc_type="unary"`) }, out)
		}
		return out, nil
	}
	return nil
}

func (p *serverProbe) redis(spec *open.Spec) error {
	var err error
	if p.ports, err = ports(spec.Endpoints[:1]); err != nil {
		return err
	}
	c := goredis.NewClient(&goredis.Options{Addr: spec.Endpoints[0], Username: spec.Username, Password: spec.Password, DB: 0})
	p.closer = func() { _ = c.Close() }
	p.own = map[string]int64{"info": 1}
	p.read = func(ctx context.Context) (map[string]int64, error) {
		s, err := c.Info(ctx, "commandstats").Result()
		if err != nil {
			return nil, err
		}
		out := map[string]int64{}
		for line := range strings.SplitSeq(s, "\n") {
			name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok || !strings.HasPrefix(name, "cmdstat_") {
				continue
			}
			for f := range strings.SplitSeq(stats, ",") {
				if v, ok := strings.CutPrefix(f, "calls="); ok {
					n, _ := strconv.ParseInt(v, 10, 64)
					out[strings.TrimPrefix(name, "cmdstat_")] = n
				}
			}
		}
		return out, nil
	}
	return nil
}

func (p *serverProbe) postgres(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%s: the URL cannot be parsed", p.name)
	}
	q := u.Query()
	for _, k := range []string{"table", "channel"} { // the adapter's, not pgx's
		q.Del(k)
	}
	u.RawQuery = q.Encode()
	if p.ports, err = ports([]string{u.Host}); err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	p.closer = func() { _ = conn.Close(context.Background()) }
	p.own = map[string]int64{"transactions": 1}
	p.read = func(ctx context.Context) (map[string]int64, error) {
		// Statistics are flushed by each server process about once a
		// second: a window of a minute or more reads them whole enough.
		var n int64
		err := conn.QueryRow(ctx, `SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()`).Scan(&n)
		return map[string]int64{"transactions": n}, err
	}
	return nil
}

func (p *serverProbe) consul(spec *open.Spec) error {
	var err error
	if p.ports, err = ports(spec.Endpoints[:1]); err != nil {
		return err
	}
	header := http.Header{}
	if spec.HasAuth {
		header.Set("X-Consul-Token", spec.Username)
	}
	p.own = map[string]int64{"GET": 1}
	p.read = func(ctx context.Context) (map[string]int64, error) {
		b, err := httpGet(ctx, probeHTTP, "http://"+spec.Endpoints[0]+"/v1/agent/metrics?format=prometheus", header)
		if err != nil {
			return nil, err
		}
		out := map[string]int64{}
		promSum(b, "consul_api_http_count", "method", "", nil, out)
		if len(out) == 0 {
			return nil, fmt.Errorf("no consul_api_http counts: is telemetry.prometheus_retention_time set on the agent?")
		}
		return out, nil
	}
	return nil
}

func (p *serverProbe) zookeeper(spec *open.Spec) error {
	var err error
	if p.ports, err = ports(spec.Endpoints); err != nil {
		return err
	}
	p.own = map[string]int64{"packets": int64(len(spec.Endpoints))}
	p.read = func(ctx context.Context) (map[string]int64, error) {
		var n int64
		for _, ep := range spec.Endpoints {
			v, err := zkMntr(ctx, ep, "zk_packets_received")
			if err != nil {
				return nil, err
			}
			n += v
		}
		return map[string]int64{"packets": n}, nil
	}
	return nil
}

// zkMntr returns one figure of a ZooKeeper server's mntr command.
func zkMntr(ctx context.Context, addr, key string) (int64, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "mntr"); err != nil {
		return 0, err
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+"\t"); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("zookeeper %s: mntr has no %s (is mntr in 4lw.commands.whitelist?)", addr, key)
}

func (p *serverProbe) kube(raw string) error {
	kubeconfig, ctxName, err := kubeURLConfig(raw)
	if err != nil {
		return err
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: ctxName}).ClientConfig()
	if err != nil {
		return fmt.Errorf("%s: kubeconfig: %w", p.name, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return err
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	if p.ports, err = ports([]string{net.JoinHostPort(u.Hostname(), port)}); err != nil {
		return err
	}
	p.own = map[string]int64{"GET": 1}
	p.read = func(ctx context.Context) (map[string]int64, error) {
		b, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			return nil, err
		}
		out := map[string]int64{}
		promSum(b, "apiserver_request_total", "verb", "", nil, out)
		return out, nil
	}
	return nil
}

// sampleOrErr is sample on a probe that may be nil (no server).
func (p *serverProbe) sampleOrErr(ctx context.Context) (serverSample, error) {
	if p == nil {
		return serverSample{}, nil
	}
	return p.sample(ctx)
}

// window ends a window that started with s0 (or failed to, serr) and
// lasted took: the server's figures, or why there are none (note, kept
// when there is no probe).
func (p *serverProbe) window(ctx context.Context, s0 serverSample, serr error, took time.Duration, note string) (*serverDelta, string) {
	if p == nil {
		return nil, note
	}
	s1, err := p.sample(ctx)
	if err = cmp.Or(serr, err); err != nil {
		return nil, "server counts: " + err.Error()
	}
	d := p.delta(s0, s1, took)
	if s0.cpuErr != nil {
		note = "server CPU: " + s0.cpuErr.Error()
	}
	return &d, note
}
