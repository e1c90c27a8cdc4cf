package demo

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// startNodeServers starts one HTTP server per candidate, answering "hello
// from node-i", and names each candidate by its server's address.
func (d *demo) startNodeServers() error {
	for i := 1; i <= d.cfg.Candidates; i++ {
		n := &node{name: fmt.Sprintf("node-%d", i)}
		hello := "hello from " + n.name
		addr, err := d.serve(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, hello) }, &n.srv)
		if err != nil {
			return fmt.Errorf("start the HTTP server of %s: %w", n.name, err)
		}
		n.addr = addr
		d.labels[n.addr] = n.name
		d.nodes = append(d.nodes, n)
	}
	return nil
}

// startProxy builds the proxy on the follower's view of the leader and
// serves it.
func (d *demo) startProxy() error {
	d.proxy = d.cfg.NewProxy(d.fol.Current)
	addr, err := d.serve(d.proxy.ServeHTTP, &d.pSrv)
	if err != nil {
		return fmt.Errorf("start the proxy: %w", err)
	}
	d.pURL = "http://" + addr
	return nil
}

// serve serves h on 127.0.0.1 on a port of the system's choice, sets *srv
// and returns the address.
func (d *demo) serve(h http.HandlerFunc, srv **http.Server) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	s := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	*srv = s
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		_ = s.Serve(ln)
	}()
	return ln.Addr().String(), nil
}

// closeServers closes the proxy's server, every candidate's server and the
// proxy's connections.
func (d *demo) closeServers() {
	if d.pSrv != nil {
		_ = d.pSrv.Close()
	}
	for _, n := range d.nodes {
		if n.srv != nil {
			_ = n.srv.Close()
		}
	}
	if d.proxy != nil {
		d.proxy.Close()
	}
}
