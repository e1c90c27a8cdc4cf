package etcd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

// refusalWait bounds how long refused waits for the server's verdict on
// the client certificate, which a server sends right after the handshake.
const refusalWait = time.Second

// explain returns err, the failure of an Open whose servers gave no
// answer, or what a TLS probe of the endpoints finds: a TLS mismatch or an
// untrusted server certificate (adapter.Explain), or the server's refusal
// of the client's certificate (matching errCertificateRefused). A
// cancelled ctx, or another error (a refused password), keeps err.
func explain(ctx context.Context, endpoints []string, cfg *tls.Config, err error) error {
	if found := adapter.Explain(ctx, "etcd", endpoints, cfg, err); found != err || cfg == nil {
		return found
	}
	if errors.Is(ctx.Err(), context.Canceled) || !(unreachableErr(err) || errors.Is(err, store.ErrNotReachable) || errors.Is(err, io.EOF)) {
		return err
	}
	for _, ep := range endpoints {
		if found := refused(context.WithoutCancel(ctx), ep, cfg); found != nil {
			return found
		}
	}
	return err
}

// refused reports whether endpoint refuses cfg's client certificate (or
// its absence): with TLS 1.3 the client's handshake ends before the server
// has checked the certificate, whose verdict comes as an alert on the
// first read; with TLS 1.2 the handshake itself fails. It returns nil when
// the server sends no alert within refusalWait.
func refused(ctx context.Context, endpoint string, cfg *tls.Config) error {
	ctx, cancel := context.WithTimeout(ctx, refusalWait+time.Second)
	defer cancel()
	c, err := adapter.DialTLS(ctx, endpoint, cfg)
	if err == nil {
		_ = c.SetReadDeadline(time.Now().Add(refusalWait))
		_, err = c.Read(make([]byte, 1))
		_ = c.Close()
	}
	alert := adapter.RemoteAlert(err)
	if alert == nil {
		return nil
	}
	return fmt.Errorf("%w (%s): %v", errCertificateRefused, describe(cfg, time.Now()), alert)
}

// describe names cfg's client certificate for a message: subject, issuer
// and validity, "none given" when there is none.
func describe(cfg *tls.Config, now time.Time) string {
	if len(cfg.Certificates) == 0 || len(cfg.Certificates[0].Certificate) == 0 {
		return "none given: the server requires one"
	}
	leaf := cfg.Certificates[0].Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(cfg.Certificates[0].Certificate[0]); err != nil {
			return "unparsable: " + err.Error()
		}
	}
	s := fmt.Sprintf("subject %q, issuer %q", leaf.Subject.CommonName, leaf.Issuer.CommonName)
	switch {
	case now.After(leaf.NotAfter):
		s += ", expired on " + leaf.NotAfter.UTC().Format(time.RFC3339)
	case now.Before(leaf.NotBefore):
		s += ", not valid before " + leaf.NotBefore.UTC().Format(time.RFC3339)
	case len(leaf.ExtKeyUsage) > 0 && !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageClientAuth) && !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageAny):
		s += ", not for client authentication"
	default:
		s += "; does the server trust that issuer?"
	}
	return s
}
