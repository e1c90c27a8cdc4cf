package kubernetes

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/kvtools/valkeyrie/store"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leadership-go/leadership/internal/electionrecord"
)

// The annotations and label this package writes on its Leases.
const (
	// annotationValue holds the value written at the key (the election
	// record, JSON) when it is valid UTF-8.
	annotationValue = "leadership-go.github.io/value"
	// annotationValueBase64 holds it, base64 (standard, padded), otherwise.
	annotationValueBase64 = "leadership-go.github.io/value-base64"
	// annotationRenewTime is the spec.renewTime written with the value: a
	// Lease whose renewTime differs was last written by someone else (a
	// client-go elector), and its spec, not the value, says who holds it.
	annotationRenewTime = "leadership-go.github.io/renew-time"
	// labelManagedBy is set to managedBy on every Lease this package
	// writes (kubectl get lease -l app.kubernetes.io/managed-by=leadership-go).
	labelManagedBy = "app.kubernetes.io/managed-by"
	// managedBy is labelManagedBy's value.
	managedBy = "leadership-go"
)

// microLayout is how metav1.MicroTime is written in JSON.
const microLayout = "2006-01-02T15:04:05.000000Z07:00"

// leaseFor builds the Lease that stores value at key: the value in an
// annotation, and the spec filled from the election record it holds, if
// it is one (holder, lease duration, acquire and renew times, the term as
// leaseTransitions), so that kubectl get lease shows who leads.
// resourceVersion, when not "", makes the write conditional on it.
func leaseFor(namespace, name string, value []byte, resourceVersion string, now time.Time) *coordinationv1.Lease {
	renew := metav1.NewMicroTime(now.UTC().Truncate(time.Microsecond))
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       namespace,
			ResourceVersion: resourceVersion,
			Labels:          map[string]string{labelManagedBy: managedBy},
			Annotations:     map[string]string{annotationRenewTime: renew.UTC().Format(microLayout)},
		},
		Spec: coordinationv1.LeaseSpec{RenewTime: &renew},
	}
	if utf8.Valid(value) {
		l.Annotations[annotationValue] = string(value)
	} else {
		l.Annotations[annotationValueBase64] = base64.StdEncoding.EncodeToString(value)
	}
	rec, ok := electionrecord.Decode(value)
	if !ok {
		return l
	}
	transitions := int32(min(rec.Term, 1<<31-1))
	l.Spec.LeaseTransitions = &transitions
	if rec.Free() || rec.Ended {
		return l
	}
	holder := rec.Leader
	secs := int32(min((rec.TTLms+999)/1000, 1<<31-1))
	l.Spec.HolderIdentity = &holder
	l.Spec.LeaseDurationSeconds = &secs
	acquire := renew
	if t, err := time.Parse(time.RFC3339Nano, rec.Since); err == nil {
		acquire = metav1.NewMicroTime(t.UTC().Truncate(time.Microsecond))
	}
	l.Spec.AcquireTime = &acquire
	return l
}

// pairOf is the pair a Lease stands for: its value, and its
// resourceVersion as LastIndex. A Lease written by this package gives the
// value written. Any other Lease (a client-go elector's), or one whose
// spec someone else changed since, gives an election record made from its
// spec (foreignRecord). next says that l is an event of a running watch,
// the next version after the one the watch sent before (a watch resumed
// from a resourceVersion misses none; a list may have).
func pairOf(key string, l *coordinationv1.Lease, next bool) (*store.KVPair, error) {
	index, err := indexOf(l.ResourceVersion)
	if err != nil {
		return nil, err
	}
	pair := &store.KVPair{Key: key, LastIndex: index}
	value, ours, err := storedValue(l)
	if err != nil {
		return nil, err
	}
	if ours && renewTimeOf(l) == l.Annotations[annotationRenewTime] {
		pair.Value = value
		return pair, nil
	}
	pair.Value = foreignRecord(l, value, ours, next)
	return pair, nil
}

// storedValue returns the value in the Lease's annotations, and whether it
// has one.
func storedValue(l *coordinationv1.Lease) ([]byte, bool, error) {
	if v, ok := l.Annotations[annotationValue]; ok {
		return []byte(v), true, nil
	}
	if v, ok := l.Annotations[annotationValueBase64]; ok {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return nil, false, fmt.Errorf("lease %s/%s: annotation %s: %w", l.Namespace, l.Name, annotationValueBase64, err)
		}
		return b, true, nil
	}
	return nil, false, nil
}

// renewTimeOf is the Lease's spec.renewTime as this package writes it in
// annotationRenewTime, or "".
func renewTimeOf(l *coordinationv1.Lease) string {
	if l.Spec.RenewTime == nil {
		return ""
	}
	return l.Spec.RenewTime.UTC().Format(microLayout)
}

// foreignRecord is the election record a Lease not (or no longer) written
// by this package stands for, read from its spec as client-go's elector
// writes it:
//
//   - holder: spec.holderIdentity; an empty or absent one is a free
//     record (no leader);
//   - lease: 10/9 of spec.leaseDurationSeconds (15s, client-go's
//     default, when absent), see foreignTTL;
//   - term: spec.leaseTransitions + 1, or, when the Lease still carries a
//     record of this package (written before a client-go elector took it
//     over), one more than the larger of that record's term and
//     leaseTransitions; the generation is that record's;
//   - renewals: each new spec.renewTime is a new write of the term (its
//     microseconds are the record's sequence number, which jumps from one
//     renewal to the next); in a watch event that is the next version
//     after the watch's previous one (next), the record says so
//     (SeqJumps), and a Follower dates the renewal from that event's
//     arrival, as it dates the next renewal of its own records. So it
//     keeps naming the holder while renewTime changes and drops it
//     leaseDurationSeconds after it last saw renewTime change (see the
//     package documentation for the exact bound). Reads and lists (which
//     may skip versions) give the record without SeqJumps, and the same
//     write token: the engine takes both for the same write.
func foreignRecord(l *coordinationv1.Lease, value []byte, hadValue, next bool) []byte {
	s := l.Spec
	var transitions uint64
	if s.LeaseTransitions != nil && *s.LeaseTransitions > 0 {
		transitions = uint64(*s.LeaseTransitions)
	}
	rec := electionrecord.Record{Term: transitions + 1}
	if hadValue {
		if old, ok := electionrecord.Decode(value); ok {
			rec.Gen = old.Gen
			rec.Term = max(old.Term, transitions) + 1
		}
	}
	if s.RenewTime != nil {
		rec.Seq = uint64(max(s.RenewTime.UnixMicro(), 0))
	}
	rec.SeqJumps = next
	if s.HolderIdentity != nil && *s.HolderIdentity != "" {
		rec.Leader = *s.HolderIdentity
		rec.ID = electionrecord.LeaseHolderPrefix + *s.HolderIdentity
		rec.TTLms = foreignTTL(15)
		if s.LeaseDurationSeconds != nil && *s.LeaseDurationSeconds > 0 {
			rec.TTLms = foreignTTL(*s.LeaseDurationSeconds)
		}
		if s.AcquireTime != nil {
			rec.Since = s.AcquireTime.UTC().Format(time.RFC3339Nano)
		}
	}
	// Not Stamp, whose token is random: every read of one version of the
	// Lease must give the same record.
	rec.Version = electionrecord.Version
	rec.Token = fmt.Sprintf("lease.%d.%d.%s", rec.Term, rec.Seq, l.ResourceVersion)
	b, _ := json.Marshal(rec) // strings, numbers and bools cannot fail
	return b
}

// foreignTTL is the lease, in milliseconds, of a record made from a
// Lease's spec: 10/9 of its duration, rounded up to a millisecond. The
// engine's Follower drops a holder at 9/10 of its record's lease (a tenth
// before the library's candidates may take over) after it saw the latest
// write arrive; a client-go elector's holder is then dropped
// leaseDurationSeconds (and less than a millisecond) after the follower
// last saw renewTime change, on its own clock: when a client-go candidate
// that saw the same change may take over, on its own. A Candidate of this
// library waiting on such a Lease waits the whole 10/9 before it takes it.
func foreignTTL(seconds int32) int64 { return (int64(seconds)*10000 + 8) / 9 }

// indexOf parses a resourceVersion. The API calls it opaque; every API
// server stores it as etcd's revision, a decimal integer, and LastIndex
// must be one.
func indexOf(rv string) (uint64, error) {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%w: resourceVersion %q is not a positive decimal integer (this package needs the etcd revisions every API server gives)", errUnexpected, rv)
	}
	return n, nil
}

// versionOf is the resourceVersion a LastIndex came from.
func versionOf(index uint64) string { return strconv.FormatUint(index, 10) }
