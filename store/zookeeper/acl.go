package zookeeper

import (
	"crypto/sha1" //nolint:gosec // ZooKeeper's digest scheme is SHA-1
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

// parseACL reads an ACL in the form of ZooKeeper's CLI (setAcl): entries
// scheme:id:perms separated by commas, perms being letters of "cdrwa"
// (create, delete, read, write, admin). For instance
//
//	auth::cdrwa,digest:reader:BASE64:r
//
// gives every right to the identities the creating session authenticated
// as, and read to the digest user reader (BASE64 is the base64 of the
// SHA-1 of "reader:PASSWORD": see digest). A space in a digest is read as
// "+", which an unencoded URL query turns into a space. Ids holding a comma
// (x509 names) cannot be written in this form.
func parseACL(s string) ([]zk.ACL, error) {
	var acl []zk.ACL
	for _, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		first, last := strings.IndexByte(entry, ':'), strings.LastIndexByte(entry, ':')
		if first < 0 || first == last {
			return nil, invalid("ACL", fmt.Sprintf("%q: want scheme:id:perms (as auth::cdrwa or digest:user:BASE64:r)", maskEntry(entry)))
		}
		scheme, id, letters := entry[:first], entry[first+1:last], entry[last+1:]
		if scheme == "digest" {
			id = strings.ReplaceAll(id, " ", "+")
		}
		perms, err := parsePerms(letters)
		if err != nil {
			return nil, invalid("ACL", fmt.Sprintf("%q: %v", maskEntry(entry), err))
		}
		switch scheme {
		case "":
			return nil, invalid("ACL", fmt.Sprintf("%q: no scheme", maskEntry(entry)))
		case "world":
			if id != "anyone" {
				return nil, invalid("ACL", fmt.Sprintf("%q: the world scheme's only id is anyone", entry))
			}
		case "auth":
			if id != "" {
				return nil, invalid("ACL", fmt.Sprintf("%q: the auth scheme takes no id (auth::perms)", entry))
			}
		case "digest":
			if user, hash, ok := strings.Cut(id, ":"); !ok || user == "" || hash == "" || strings.Contains(hash, ":") {
				return nil, invalid("ACL", fmt.Sprintf("%q: a digest id is user:BASE64", maskEntry(entry)))
			}
		}
		acl = append(acl, zk.ACL{Perms: perms, Scheme: scheme, ID: id})
	}
	return acl, nil
}

// maskEntry is an ACL entry as an error may quote it: a digest entry's
// digest (anything after its user) masked, its permissions kept.
func maskEntry(entry string) string {
	scheme, id, ok := strings.Cut(entry, ":")
	if !ok || !strings.EqualFold(strings.TrimSpace(scheme), "digest") {
		return entry
	}
	user, rest, ok := strings.Cut(id, ":")
	if !ok {
		return entry
	}
	perms := ""
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		perms = rest[i:]
	}
	return scheme + ":" + user + ":" + adapter.Mask + perms
}

// parsePerms reads permission letters "cdrwa".
func parsePerms(letters string) (int32, error) {
	var perms int32
	for _, r := range letters {
		switch r {
		case 'c':
			perms |= zk.PermCreate
		case 'd':
			perms |= zk.PermDelete
		case 'r':
			perms |= zk.PermRead
		case 'w':
			perms |= zk.PermWrite
		case 'a':
			perms |= zk.PermAdmin
		default:
			return 0, fmt.Errorf("unknown permission %q (letters of cdrwa)", r)
		}
	}
	if perms == 0 {
		return 0, errors.New("no permission (letters of cdrwa)")
	}
	return perms, nil
}

// digest returns ZooKeeper's digest id of user and password,
// "user:BASE64(SHA-1(user:password))", as ACLs name digest identities.
func digest(user, password string) string {
	sum := sha1.Sum([]byte(user + ":" + password)) //nolint:gosec // ZooKeeper's digest scheme
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// permName is the name of one permission bit, for messages.
func permName(perm int32) string {
	switch perm {
	case zk.PermCreate:
		return "CREATE"
	case zk.PermDelete:
		return "DELETE"
	case zk.PermRead:
		return "READ"
	case zk.PermWrite:
		return "WRITE"
	case zk.PermAdmin:
		return "ADMIN"
	}
	return "a"
}

// noAuth is a zk.ErrNoAuth with the node whose ACL refused it and the
// permission that was missing, for kv.denied.
type noAuth struct {
	node string
	perm int32
	err  error
}

func (e *noAuth) Error() string { return e.err.Error() }
func (e *noAuth) Unwrap() error { return e.err }

// deniedAt annotates err, when it is zk.ErrNoAuth, with the node whose
// perm was refused.
func deniedAt(err error, node string, perm int32) error {
	if errors.Is(err, zk.ErrNoAuth) {
		return &noAuth{node: node, perm: perm, err: err}
	}
	return err
}

// parent is the parent node of p ("/" for a top-level node).
func parent(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return "/"
}

// denied is the *AccessError of op refused by ZooKeeper (zk.ErrNoAuth).
// When the refused node's ACL is readable, it tells a wrong password from
// a missing right: ZooKeeper accepts any digest password (the identity is
// the digest of user and password), so a session refused a right that the
// ACL grants its user name holds a wrong password.
func (s *kv) denied(op string, err error) error {
	ae := &AccessError{Op: op, User: s.st.username, Err: err}
	var na *noAuth
	if !errors.As(err, &na) {
		return ae
	}
	ae.Node, ae.Perm = na.node, na.perm
	acl, _, aerr := s.zc().GetACL(na.node)
	if aerr != nil {
		return ae
	}
	ae.ACLRead = true
	for _, a := range acl {
		user, _, _ := strings.Cut(a.ID, ":")
		if a.Scheme == "digest" && s.st.username != "" && user == s.st.username && a.Perms&na.perm != 0 {
			ae.WrongPassword = true
		}
	}
	return ae
}

// AccessError is a call ZooKeeper refused (zk.ErrNoAuth) because the
// session's identity lacks a right on a node, or, when WrongPassword is
// set, because the password of its digest user is wrong: ZooKeeper takes
// any digest password, and a wrong one shows as the first refusal of a
// right that the node's ACL grants the user. errors.Is(err, errPermission)
// is true, errors.Is(err, errAuthFailed) too when WrongPassword is set,
// and errors.Is(err, zk.ErrNoAuth) always.
type AccessError struct {
	Op            string // the store call ("get", "atomic put", ...)
	Node          string // the znode whose ACL refused it, when known
	Perm          int32  // the right refused (zk.PermRead, ...), when known
	User          string // the digest user of the session, or "" (anonymous)
	ACLRead       bool   // Node's ACL could be read to tell the cases apart
	WrongPassword bool   // the ACL grants User the right: the password is wrong
	Err           error  // zk.ErrNoAuth
}

// Error is one line naming the call, the node, the right and the identity,
// never the password.
func (e *AccessError) Error() string {
	who := "an unauthenticated session"
	if e.User != "" {
		who = fmt.Sprintf("digest user %q", e.User)
	}
	msg := "zookeeper: " + e.Op + ": "
	switch {
	case e.WrongPassword:
		return msg + fmt.Sprintf("authentication failed: wrong password for %s (the ACL of %s grants that user %s, which this session is refused)", who, e.Node, permName(e.Perm))
	case e.Node == "":
		return msg + fmt.Sprintf("permission denied: %s lacks a right this call needs (%v)", who, e.Err)
	case e.ACLRead:
		return msg + fmt.Sprintf("permission denied: %s has no %s right on %s", who, permName(e.Perm), e.Node)
	}
	hint := ""
	if e.User != "" {
		hint = " (or its password is wrong: ZooKeeper takes any digest password)"
	}
	return msg + fmt.Sprintf("permission denied: %s has no %s right on %s%s", who, permName(e.Perm), e.Node, hint)
}

// Is reports whether errPermission matches target (target is it, or the
// shared store.ErrPermission), or errAuthFailed does for a
// wrong password.
func (e *AccessError) Is(target error) bool {
	return errors.Is(errPermission, target) || (e.WrongPassword && errors.Is(errAuthFailed, target))
}

// Unwrap returns zk.ErrNoAuth.
func (e *AccessError) Unwrap() error { return e.Err }
