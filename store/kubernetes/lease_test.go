package kubernetes

import (
	"errors"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leadership-go/leadership/internal/electionrecord"
)

// A record written through the store fills the spec kubectl shows, and
// reads back as written.
func TestLeaseForRecord(t *testing.T) {
	since := time.Date(2026, 11, 27, 10, 0, 0, 123456789, time.UTC)
	rec := electionrecord.Record{Leader: "node-1", ID: "abc", Term: 7, Seq: 3, TTLms: 2500, Since: since.Format(time.RFC3339Nano)}
	value := rec.Stamp()
	now := time.Date(2026, 11, 27, 10, 0, 5, 0, time.UTC)
	l := leaseFor("ns", "service.leader", value, "42", now)
	if l.ResourceVersion != "42" || l.Labels[labelManagedBy] != managedBy {
		t.Fatalf("metadata %+v", l.ObjectMeta)
	}
	s := l.Spec
	if s.HolderIdentity == nil || *s.HolderIdentity != "node-1" {
		t.Errorf("holderIdentity %v", s.HolderIdentity)
	}
	if s.LeaseDurationSeconds == nil || *s.LeaseDurationSeconds != 3 {
		t.Errorf("leaseDurationSeconds %v, want 3 (2.5s rounded up)", s.LeaseDurationSeconds)
	}
	if s.AcquireTime == nil || !s.AcquireTime.Time.Equal(since.Truncate(time.Microsecond)) {
		t.Errorf("acquireTime %v, want %v", s.AcquireTime, since)
	}
	if s.RenewTime == nil || !s.RenewTime.Time.Equal(now) {
		t.Errorf("renewTime %v, want %v", s.RenewTime, now)
	}
	if s.LeaseTransitions == nil || *s.LeaseTransitions != 7 {
		t.Errorf("leaseTransitions %v, want the term 7", s.LeaseTransitions)
	}
	l.ResourceVersion = "43"
	pair, err := pairOf("service/leader", l, false)
	if err != nil || string(pair.Value) != string(value) || pair.LastIndex != 43 || pair.Key != "service/leader" {
		t.Fatalf("pairOf = %+v, %v", pair, err)
	}
	// A watch event of it too: the record as written.
	if pair, err := pairOf("service/leader", l, true); err != nil || string(pair.Value) != string(value) {
		t.Fatalf("pairOf (a watch event) = %+v, %v", pair, err)
	}

	// A free record: no holder, the term kept.
	rec = electionrecord.Record{Term: 8, Gen: 1}
	l = leaseFor("ns", "n", rec.Stamp(), "", now)
	if l.Spec.HolderIdentity != nil || l.Spec.LeaseDurationSeconds != nil || *l.Spec.LeaseTransitions != 8 {
		t.Errorf("free record spec %+v", l.Spec)
	}
}

// Values that are not records, or not UTF-8, are kept as they are.
func TestLeaseForOtherValues(t *testing.T) {
	for _, v := range [][]byte{[]byte("hello"), {0xff, 0x00, 0xfe}, {}} {
		l := leaseFor("ns", "n", v, "", time.Now())
		l.ResourceVersion = "5"
		if l.Spec.HolderIdentity != nil {
			t.Errorf("%q: holder %q", v, *l.Spec.HolderIdentity)
		}
		pair, err := pairOf("n", l, false)
		if err != nil || string(pair.Value) != string(v) {
			t.Errorf("%q: read back %q, %v", v, pair.Value, err)
		}
	}
}

func clientGoLease(holder string, durationSec int32, renew time.Time, transitions int32, rv string) *coordinationv1.Lease {
	acquire := metav1.NewMicroTime(renew.Add(-time.Minute))
	r := metav1.NewMicroTime(renew)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "my-app", Namespace: "ns", ResourceVersion: rv},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: &holder, LeaseDurationSeconds: &durationSec,
			AcquireTime: &acquire, RenewTime: &r, LeaseTransitions: &transitions,
		},
	}
}

// A Lease written by client-go's elector reads as a record naming its
// holder, renewed at each renewTime, with 10/9 of its duration.
func TestForeignLease(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	p1, err := pairOf("my-app", clientGoLease("pod-a", 15, t0, 2, "100"), false)
	if err != nil {
		t.Fatal(err)
	}
	r1, ok := electionrecord.Decode(p1.Value)
	if !ok || r1.Leader != "pod-a" || r1.Free() || r1.Term != 3 || r1.TTLms != 16667 {
		t.Fatalf("record %+v (ok %v)", r1, ok)
	}
	if got := time.Duration(r1.TTLms) * time.Millisecond * 9 / 10; got < 15*time.Second {
		t.Errorf("the follower would drop the holder after %v, before leaseDurationSeconds", got)
	}
	// The same version reads the same; a renewal is a newer write of the
	// same term.
	again, _ := pairOf("my-app", clientGoLease("pod-a", 15, t0, 2, "100"), false)
	if string(again.Value) != string(p1.Value) {
		t.Errorf("two reads of one version differ:\n%s\n%s", p1.Value, again.Value)
	}
	p2, _ := pairOf("my-app", clientGoLease("pod-a", 15, t0.Add(2*time.Second), 2, "101"), false)
	r2, _ := electionrecord.Decode(p2.Value)
	if !r2.NewerThan(&r1) || r2.Term != r1.Term || r2.ID != r1.ID {
		t.Errorf("renewal %+v is not a newer write of %+v's term", r2, r1)
	}
	// Its Seq jumps: only a watch event that is the next version says it
	// is the next write anyway (SeqJumps), a read does not; both are the
	// same write (one token).
	if r1.SeqJumps || r2.SeqJumps || r2.Seq == r1.Seq+1 {
		t.Errorf("read renewals %+v, %+v: want SeqJumps unset, Seq jumping", r1, r2)
	}
	e2, _ := pairOf("my-app", clientGoLease("pod-a", 15, t0.Add(2*time.Second), 2, "101"), true)
	if r, _ := electionrecord.Decode(e2.Value); !r.SeqJumps || r.Token != r2.Token || r.Seq != r2.Seq {
		t.Errorf("the renewal as the next watch event reads %+v, want %+v with SeqJumps", r, r2)
	}
	// Another holder: a later term.
	p3, _ := pairOf("my-app", clientGoLease("pod-b", 15, t0.Add(20*time.Second), 3, "102"), false)
	r3, _ := electionrecord.Decode(p3.Value)
	if r3.Leader != "pod-b" || r3.Term <= r2.Term {
		t.Errorf("takeover %+v after %+v", r3, r2)
	}
	// Released (client-go's ReleaseOnCancel): no holder.
	p4, _ := pairOf("my-app", clientGoLease("", 1, t0.Add(21*time.Second), 3, "103"), false)
	if r4, ok := electionrecord.Decode(p4.Value); !ok || !r4.Free() {
		t.Errorf("released lease reads %+v", r4)
	}
}

// A Lease of this package later updated by a client-go elector (which
// keeps the annotations and changes the spec) reads as the elector's.
func TestOurLeaseTakenOverByClientGo(t *testing.T) {
	rec := electionrecord.Record{Leader: "lib", ID: "x", Term: 9, Gen: 2, TTLms: 2000}
	l := leaseFor("ns", "my-app", rec.Stamp(), "", time.Now())
	holder := "pod-c"
	renew := metav1.NewMicroTime(time.Now().Add(time.Second))
	l.Spec.HolderIdentity, l.Spec.RenewTime = &holder, &renew
	tr := int32(10)
	l.Spec.LeaseTransitions = &tr
	l.ResourceVersion = "7"
	p, err := pairOf("my-app", l, false)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := electionrecord.Decode(p.Value)
	if !ok || r.Leader != "pod-c" || r.Gen != 2 || r.Term != 11 {
		t.Fatalf("read %+v, want pod-c in a later term of generation 2", r)
	}
}

func TestIndexOf(t *testing.T) {
	if n, err := indexOf("123"); n != 123 || err != nil {
		t.Errorf("indexOf(123) = %d, %v", n, err)
	}
	for _, rv := range []string{"", "0", "abc", "-1"} {
		if _, err := indexOf(rv); !errors.Is(err, errUnexpected) {
			t.Errorf("indexOf(%q): %v", rv, err)
		}
	}
}
