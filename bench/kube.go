package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/leadership-go/leadership/leadershiptest"
	_ "github.com/leadership-go/leadership/store/all" // every backend's URLs in open.Store
)

// The Kubernetes backend (k8s://NAMESPACE?kubeconfig=FILE): its row is
// there when the environment of scripts/servers.sh's kube server is
// (scripts/servers.sh env).
const (
	kubeNamespaceEnv  = "LEADERSHIP_KUBE_NAMESPACE"
	kubeKubeconfigEnv = "LEADERSHIP_KUBECONFIG_ADMIN"
	kubeScheme        = "k8s" // store/kubernetes's scheme in store/open
)

// kubeURL is the default URL of the k8s row, "" when the namespace's
// variable is unset. The admin's kubeconfig, not the candidate's: the
// bench deletes its keys at the end (Delete, and DeleteTree in --scale),
// which the candidate's role (get, list, watch, create, update) may not.
func kubeURL() string {
	ns := strings.TrimSpace(os.Getenv(kubeNamespaceEnv))
	if ns == "" {
		return ""
	}
	if strings.Contains(ns, "://") {
		return ns
	}
	u := kubeScheme + "://" + ns
	if kc := strings.TrimSpace(os.Getenv(kubeKubeconfigEnv)); kc != "" {
		u += "?" + url.Values{"kubeconfig": {kc}}.Encode()
	}
	return u
}

// kubeForwardURL is forwardURL for a k8s:// URL, which names a namespace,
// not the API server: it puts a leadershiptest.Forwarder in front of the
// server of the URL's kubeconfig context, and writes a kubeconfig of that
// one context, whose server is the forwarder (the TLS server name stays
// the server's own host), to a private temporary directory. The returned
// URL names it; done removes it, once the client is open (the adapter
// reads its kubeconfig at Open only).
func kubeForwardURL(raw string) (string, []*leadershiptest.Forwarder, func(), error) {
	kubeconfig, ctxName, err := kubeURLConfig(raw)
	if err != nil {
		return "", nil, nil, err
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	all, err := rules.Load()
	if err != nil {
		return "", nil, nil, fmt.Errorf("load the kubeconfig: %w", err)
	}
	if ctxName == "" {
		ctxName = all.CurrentContext
	}
	kctx := all.Contexts[ctxName]
	if kctx == nil {
		return "", nil, nil, fmt.Errorf("kubeconfig: no context %q (a forwarder needs a kubeconfig, not the in-cluster configuration)", ctxName)
	}
	cluster := all.Clusters[kctx.Cluster]
	if cluster == nil {
		return "", nil, nil, fmt.Errorf("kubeconfig: context %q: no cluster %q", ctxName, kctx.Cluster)
	}
	server, err := url.Parse(cluster.Server)
	if err != nil || server.Host == "" {
		return "", nil, nil, fmt.Errorf("kubeconfig: cluster %q: server %q is not a URL", kctx.Cluster, cluster.Server)
	}
	target := server.Host
	if server.Port() == "" {
		port := "443"
		if server.Scheme == "http" {
			port = "80"
		}
		target = net.JoinHostPort(server.Hostname(), port)
	}
	fwd, err := leadershiptest.NewForwarder(target)
	if err != nil {
		return "", nil, nil, fmt.Errorf("forwarder to %s: %w", target, err)
	}
	fail := func(err error) (string, []*leadershiptest.Forwarder, func(), error) {
		_ = fwd.Close()
		return "", nil, nil, err
	}

	c := cluster.DeepCopy()
	if c.TLSServerName == "" {
		c.TLSServerName = server.Hostname()
	}
	fs := *server
	fs.Host = fwd.Addr()
	c.Server = fs.String()
	out := clientcmdapi.NewConfig()
	out.Clusters[kctx.Cluster] = c
	if user := all.AuthInfos[kctx.AuthInfo]; user != nil {
		out.AuthInfos[kctx.AuthInfo] = user.DeepCopy()
	}
	out.Contexts[ctxName] = kctx.DeepCopy()
	out.CurrentContext = ctxName

	dir, err := os.MkdirTemp("", "leadership-bench-kube-")
	if err != nil {
		return fail(err)
	}
	done := func() { _ = os.RemoveAll(dir) }
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*out, path); err != nil { // mode 0600
		done()
		return fail(fmt.Errorf("write the forwarder's kubeconfig: %w", err))
	}
	u, err := url.Parse(raw)
	if err != nil {
		done()
		return fail(err)
	}
	q := u.Query()
	q.Set("kubeconfig", path)
	q.Set("context", ctxName)
	u.RawQuery = q.Encode()
	return u.String(), []*leadershiptest.Forwarder{fwd}, done, nil
}

// kubeURLConfig returns the kubeconfig path and the context a k8s:// URL
// names (its kubeconfig and context parameters; "" when absent). The
// adapter checks the rest of the URL when the bench opens it.
func kubeURLConfig(raw string) (kubeconfig, ctxName string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		// Not url.Parse's error, which quotes the URL (any password in it).
		return "", "", errors.New("k8s URL: cannot be parsed")
	}
	if u.Scheme != kubeScheme {
		return "", "", fmt.Errorf("k8s URL: scheme %q, want %q", u.Scheme, kubeScheme)
	}
	q := u.Query()
	return q.Get("kubeconfig"), q.Get("context"), nil
}
