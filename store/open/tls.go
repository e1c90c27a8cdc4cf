package open

import (
	"crypto/tls"
	"crypto/x509"
	"os"
)

// tlsConfig builds a TLS configuration from the URL's parameters:
//
//	tls=true                 use TLS with the system's roots
//	ca=FILE                  trust the PEM certificates in FILE (implies tls)
//	cert=FILE&key=FILE       present this client certificate (implies tls)
//	server_name=NAME         the name to verify instead of the host's
//
// The server is always verified: no URL parameter turns that off (a
// program that must, in a test, builds the adapter's Config with its own
// tls.Config). It returns nil when none is given.
func tlsConfig(p *params) *tls.Config {
	on := p.boolean("tls")
	ca, cert, key := p.str("ca"), p.str("cert"), p.str("key")
	name := p.str("server_name")
	if !on && ca == "" && cert == "" && key == "" && name == "" {
		return nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: name}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			p.fail(&ConfigError{Invalid: storeURL{}, Field: "ca", Value: ca, Reason: "cannot be read", Err: err})
			return nil
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			p.fail(&ConfigError{Invalid: storeURL{}, Field: "ca", Value: ca, Reason: "holds no PEM certificate"})
			return nil
		}
		cfg.RootCAs = pool
	}
	if (cert == "") != (key == "") {
		p.fail(&ConfigError{Invalid: storeURL{}, Field: "cert", Value: cert + key, Reason: "cert and key must be given together"})
		return nil
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			p.fail(&ConfigError{Invalid: storeURL{}, Field: "cert", Value: cert, Reason: "cannot load the certificate and key", Err: err})
			return nil
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg
}

// defaultTLS is TLS with the system's roots, for schemes that imply TLS.
func defaultTLS() *tls.Config { return &tls.Config{MinVersion: tls.VersionTLS12} }
