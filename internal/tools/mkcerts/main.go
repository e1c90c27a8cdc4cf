// Command mkcerts writes the throwaway certificates of the secured test
// servers (scripts/servers.sh start etcd-secure ...) into a directory:
// a CA, a server certificate for 127.0.0.1 and localhost, client
// certificates, and the bad ones the tests present on purpose. Nothing it
// writes is ever committed; each state directory gets its own.
//
//	go run ./internal/tools/mkcerts DIR
//
// Files (PEM): ca.crt, ca.key; server.crt, server.key; client.crt,
// client.key (CN "leadership"); reader.crt, reader.key (CN
// "leadership-reader"); other-ca.crt, other-client.crt, other-client.key
// (a CA the servers do not trust, and a client certificate it signed);
// expired-client.crt, expired-client.key (signed by ca, expired);
// expired-server.crt, expired-server.key (signed by ca, expired).
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mkcerts DIR")
		os.Exit(2)
	}
	if err := write(os.Args[1], time.Now()); err != nil {
		fmt.Fprintln(os.Stderr, "mkcerts:", err)
		os.Exit(1)
	}
}

// issuer is a CA: its certificate and key.
type issuer struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// write creates every file in dir, valid from now.
func write(dir string, now time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ca, err := newCA(dir, "ca", "leadership test CA", now)
	if err != nil {
		return err
	}
	other, err := newCA(dir, "other-ca", "leadership untrusted CA", now)
	if err != nil {
		return err
	}
	valid := [2]time.Time{now.Add(-time.Hour), now.Add(30 * 24 * time.Hour)}
	expired := [2]time.Time{now.Add(-48 * time.Hour), now.Add(-24 * time.Hour)}
	for _, c := range []struct {
		name, cn string
		by       issuer
		server   bool
		period   [2]time.Time
	}{
		{"server", "127.0.0.1", ca, true, valid},
		{"client", "leadership", ca, false, valid},
		{"reader", "leadership-reader", ca, false, valid},
		{"other-client", "leadership", other, false, valid},
		{"expired-client", "leadership", ca, false, expired},
		{"expired-server", "127.0.0.1", ca, true, expired},
	} {
		if err := newLeaf(dir, c.name, c.cn, c.by, c.server, c.period); err != nil {
			return err
		}
	}
	return nil
}

func newKey() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }

func serial() (*big.Int, error) { return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62)) }

// newCA writes name.crt and name.key, a self-signed CA.
func newCA(dir, name, cn string, now time.Time) (issuer, error) {
	key, err := newKey()
	if err != nil {
		return issuer{}, err
	}
	sn, err := serial()
	if err != nil {
		return issuer{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return issuer{}, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return issuer{}, err
	}
	return issuer{cert, key}, save(dir, name, der, key)
}

// newLeaf writes name.crt and name.key, signed by by: a server
// certificate for 127.0.0.1 and localhost, or a client certificate.
func newLeaf(dir, name, cn string, by issuer, server bool, period [2]time.Time) error {
	key, err := newKey()
	if err != nil {
		return err
	}
	sn, err := serial()
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    period[0],
		NotAfter:     period[1],
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, by.cert, &key.PublicKey, by.key)
	if err != nil {
		return err
	}
	return save(dir, name, der, key)
}

// save writes name.crt and name.key (mode 0600: servers such as
// PostgreSQL refuse a key others may read).
func save(dir, name string, der []byte, key *ecdsa.PrivateKey) error {
	k, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: k}), 0o600)
}
