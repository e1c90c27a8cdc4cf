package kubernetes

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

const (
	// scheme names this backend in URLs: k8s://NAMESPACE.
	scheme = "k8s"

	// defaultDialTimeout is Config.DialTimeout's default.
	defaultDialTimeout = 5 * time.Second

	// defaultRequestTimeout is Config.RequestTimeout's default.
	defaultRequestTimeout = 5 * time.Second
)

// Config says which API server to reach, as whom, and in which namespace
// the Leases live. The zero Config uses the default kubeconfig (as
// kubectl does), or the pod's service account in a cluster.
type Config struct {
	// Namespace of the Leases. Default: the kubeconfig context's
	// namespace, or in a pod its own namespace, else "default".
	Namespace string

	// Kubeconfig is the path of a kubeconfig file. Default: $KUBECONFIG
	// (a list of files, merged as kubectl does), else ~/.kube/config;
	// when none exists and the process runs in a pod, the in-cluster
	// configuration (the pod's service account token and the cluster's
	// CA, KUBERNETES_SERVICE_HOST and _PORT).
	Kubeconfig string

	// Context is the kubeconfig context to use. Default: its
	// current-context.
	Context string

	// REST, when set, is the client configuration to use as it is (a copy
	// is made; Kubeconfig and Context must then be empty): for programs
	// that already built one. Its rate limiter and timeouts are kept;
	// Namespace must then be set.
	REST *rest.Config

	// DialTimeout bounds Open: loading the configuration, connecting, and
	// the first request (GET /version, which checks that the server
	// answers, over TLS, and accepts the credentials). It also bounds each
	// later connection attempt. Default 5s.
	DialTimeout time.Duration

	// RequestTimeout bounds every call whose context has no deadline
	// (watches excepted). Default 5s.
	RequestTimeout time.Duration
}

// parseURL parses k8s://NAMESPACE?kubeconfig=PATH&context=NAME into a
// Config. NAMESPACE may be empty (k8s:// or k8s:///: the kubeconfig's
// namespace); kubeconfig and context are optional; dial_timeout and
// request_timeout take Go durations ("3s"). Unknown parameters, a path or
// a user in the URL, and a namespace that is not a DNS label are refused
// with a *store.ConfigError.
func parseURL(raw string) (Config, error) {
	var cfg Config
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's error quotes the URL, password included
		// (k8s://user:PASSWORD@%zz): it is shown masked.
		return cfg, invalid("URL", "cannot be parsed", adapter.MaskURLError(err))
	}
	if u.Scheme != scheme {
		return cfg, invalid("URL", fmt.Sprintf("scheme %q, want %q (k8s://NAMESPACE)", u.Scheme, scheme), nil)
	}
	if u.Opaque != "" {
		return cfg, invalid("URL", "want k8s://NAMESPACE", nil)
	}
	if u.User != nil {
		return cfg, invalid("URL", "no user or password in a k8s:// URL: credentials come from the kubeconfig", nil)
	}
	if u.Path != "" && u.Path != "/" {
		return cfg, invalid("URL", fmt.Sprintf("path %q: a k8s:// URL names a namespace only (keys are given to the election, not the URL)", u.Path), nil)
	}
	if u.Port() != "" {
		return cfg, invalid("URL", "a k8s:// URL names a namespace, not a host:port (the server comes from the kubeconfig)", nil)
	}
	cfg.Namespace = u.Hostname()
	for name, values := range u.Query() {
		if len(values) != 1 {
			return cfg, invalid("URL", fmt.Sprintf("parameter %s given %d times", name, len(values)), nil)
		}
		v := values[0]
		switch name {
		case "kubeconfig":
			cfg.Kubeconfig = v
		case "context":
			cfg.Context = v
		case "dial_timeout", "request_timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return cfg, invalid("URL", fmt.Sprintf("%s=%q: want a positive duration such as 5s", name, v), err)
			}
			if name == "dial_timeout" {
				cfg.DialTimeout = d
			} else {
				cfg.RequestTimeout = d
			}
		default:
			return cfg, invalid("URL", fmt.Sprintf("unknown parameter %q (kubeconfig, context, dial_timeout, request_timeout)", name), nil)
		}
	}
	if err := cfg.check(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// check validates the fields that need no file or server.
func (cfg Config) check() error {
	if cfg.Namespace != "" {
		if errs := validation.IsDNS1123Label(cfg.Namespace); len(errs) > 0 {
			return invalid("Namespace", fmt.Sprintf("%q: %s", cfg.Namespace, strings.Join(errs, "; ")), nil)
		}
	}
	if cfg.DialTimeout < 0 {
		return invalid("DialTimeout", "negative", nil)
	}
	if cfg.RequestTimeout < 0 {
		return invalid("RequestTimeout", "negative", nil)
	}
	if cfg.REST != nil {
		if cfg.Kubeconfig != "" || cfg.Context != "" {
			return invalid("REST", "REST excludes Kubeconfig and Context", nil)
		}
		if cfg.Namespace == "" {
			return invalid("Namespace", "required with REST", nil)
		}
		if cfg.REST.Host == "" {
			return invalid("REST", "no Host", nil)
		}
	}
	return nil
}

// withDefaults fills in the durations.
func (cfg Config) withDefaults() Config {
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = defaultDialTimeout
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = defaultRequestTimeout
	}
	return cfg
}

// load returns the client configuration and the namespace: cfg.REST, or
// the kubeconfig (or in-cluster configuration) with cfg's overrides.
func (cfg Config) load() (*rest.Config, string, error) {
	if cfg.REST != nil {
		return rest.CopyConfig(cfg.REST), cfg.Namespace, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if cfg.Kubeconfig != "" {
		rules.ExplicitPath = cfg.Kubeconfig
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: cfg.Context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	rc, err := cc.ClientConfig()
	if err != nil {
		field := "Kubeconfig"
		if cfg.Context != "" && strings.Contains(err.Error(), "context") {
			field = "Context"
		}
		return nil, "", invalid(field, "cannot load the client configuration", adapter.Redact(err, rawSecrets(cc)...))
	}
	ns := cfg.Namespace
	if ns == "" {
		ns, _, err = cc.Namespace()
		if err != nil {
			return nil, "", invalid("Namespace", "cannot read the context's namespace", err)
		}
		if ns == "" {
			ns = "default"
		}
	}
	return rc, ns, nil
}

// rawSecrets lists the secrets of the kubeconfig cc loads, for
// adapter.Redact: client-go's errors about a cluster quote its server and
// proxy URLs, which may hold a password (https://user:password@host).
func rawSecrets(cc clientcmd.ClientConfig) []string {
	raw, err := cc.RawConfig()
	if err != nil {
		return nil
	}
	var out []string
	for _, c := range raw.Clusters {
		if c != nil {
			out = append(out, adapter.URLPassword(c.Server), adapter.URLPassword(c.ProxyURL))
		}
	}
	for _, a := range raw.AuthInfos {
		if a != nil {
			out = append(out, a.Password, a.Token)
		}
	}
	return out
}

// restSecrets lists the secrets of rc, for adapter.Redact: the password in
// its server URL, which client-go's errors quote, and its credentials.
func restSecrets(rc *rest.Config) []string {
	return []string{adapter.URLPassword(rc.Host), rc.Password, rc.BearerToken}
}
