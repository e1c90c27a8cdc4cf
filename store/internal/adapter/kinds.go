package adapter

import "errors"

// Sentinel returns a sentinel error whose message is msg and that matches
// (errors.Is) each of kinds: an adapter's own sentinel (such as
// etcd's unexported errInvalidConfig) made to match the shared vocabulary of package
// github.com/leadership-go/leadership/store (such as its
// ErrInvalidConfig), its message unchanged.
func Sentinel(msg string, kinds ...error) error { return &sentinel{msg: msg, kinds: kinds} }

type sentinel struct {
	msg   string
	kinds []error
}

func (e *sentinel) Error() string   { return e.msg }
func (e *sentinel) Unwrap() []error { return e.kinds }

// Tag returns err made to match kind too (errors.Is), its message
// unchanged: nil for nil, err itself when it matches kind already.
// errors.Is and errors.As reach err's own chain as before.
func Tag(err, kind error) error {
	if err == nil || kind == nil || errors.Is(err, kind) {
		return err
	}
	return &tagged{err: err, kind: kind}
}

type tagged struct{ err, kind error }

func (e *tagged) Error() string   { return e.err.Error() }
func (e *tagged) Unwrap() []error { return []error{e.err, e.kind} }

// Kind maps a client's raw error to an adapter's sentinel: an error that
// matches Raw is tagged with Sentinel (see Tag).
type Kind struct {
	// Raw is the client library's error (such as etcd's
	// rpctypes.ErrPermissionDenied).
	Raw error
	// Match, when set, is used instead of Raw: it reports whether an
	// error is of the kind (such as a server reply's error code).
	Match func(error) bool
	// Sentinel is the adapter's own (such as etcd's unexported errPermissionDenied),
	// which matches the shared vocabulary.
	Sentinel error
}

// Refine tags err with the Sentinel of the first of kinds whose Raw it
// matches (see Tag); it returns err unchanged when none does.
func Refine(err error, kinds []Kind) error {
	if err == nil {
		return nil
	}
	for _, k := range kinds {
		if k.Match != nil && k.Match(err) || k.Match == nil && errors.Is(err, k.Raw) {
			return Tag(err, k.Sentinel)
		}
	}
	return err
}
