package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/internal/electionrecord"
)

const statusAbout = `
Prints the leader of the election at --key once it has seen that leader
renew its lease, as follow prints a line: "TIME LEADER TERM" ("-" for no
leader; TERM is the fencing token, or the last term when there is no
leader), or with --json
  {"time":"2025-01-02T15:04:05.123456789Z","leader":"node-1","term":7}

One read cannot tell a live leader from one that crashed: both leave the
same record. So status watches the election until it sees the holder's
record rewritten (a renewal, or a new term begun): a live leader renews
within one renew interval (a third of the TTL by default; with run's
defaults 3.6s for a TTL of 15s), and is reported as soon as it does. A
free or ended election is reported at once.

A holder not seen renewing its lease within its TTL (plus a tenth of it,
at most a second, for the last read) is not reported as the leader: the
line shows "-", --json adds "unconfirmed":"NAME", stderr says that NAME is
unconfirmed (it has probably crashed; another candidate takes over once
its TTL has run out), and status exits with 5. A holder whose record shows
fewer renewals than the TTLs its term has lasted (it crashed long ago) is
reported so at once. Exit 0 thus always means that the leader printed
renewed its lease while status watched.

With --no-wait, status reads the record once and does not wait: a holder
is printed as unconfirmed (exit 5; --json adds "unconfirmed":"NAME",
"renewals" (the writes of its term), "since" and "ttl_ms"), and stderr
names it with the renewals its record shows.` + storeAbout

// statusExits documents status's own exit codes.
const statusExits = `  3  the election has no leader (nothing at --key, or it is free)
  4  the election was ended (leadership end)
  5  unconfirmed: a leader is recorded but was not seen renewing its lease
     within its TTL (it has probably crashed), or --no-wait did not watch
`

// statusCommand describes the status subcommand.
func statusCommand() *command {
	return &command{
		name:    "status",
		args:    "--store URL --key KEY [--json] [--no-wait]",
		summary: "print the leader once seen renewing its lease (within one renew interval; --no-wait: the record as it is)",
		about:   statusAbout,
		exits:   statusExits,
		setup: func(fs *flag.FlagSet) func(context.Context, []string, streams) error {
			var ef electionFlags
			ef.add(fs)
			asJSON := fs.Bool("json", false, "print a JSON object")
			noWait := fs.Bool("no-wait", false, "do not wait to see the holder renew its lease: print the stored record at once, a holder as unconfirmed (exit 5) with the renewals its record shows")
			return flagsOnly("status", ef.validate, func(ctx context.Context, s streams) error {
				return runStatus(ctx, ef, *asJSON, *noWait, s)
			})
		},
	}
}

// electionRecord is the record the library keeps at an election's key
// (package internal/electionrecord): the holder, and the counters that
// every write raises.
type electionRecord = electionrecord.Record

// heldRecord reports whether r names a holder of a running election.
func heldRecord(r *electionRecord) bool { return !r.Free() && !r.Ended }

// holderTTL is the holder's lease, capped at the longest TTL the library
// allows (a longer one was not written by a candidate).
func holderTTL(r *electionRecord) time.Duration {
	return min(max(r.TTL(), 0), leadership.MaxTTL)
}

// electionState is one read of the election key.
type electionState struct {
	missing bool           // nothing at the key
	rec     electionRecord // when not missing
	at      time.Time      // when the read answered
}

// held reports whether the state names a holder of a running election.
func (s *electionState) held() bool { return !s.missing && heldRecord(&s.rec) }

// foreignValueError is the outcome of status when the key holds a value
// that is not an election record status can read (another program's value,
// or a record of a later format version).
type foreignValueError struct{ Key string }

func (e *foreignValueError) Error() string {
	return fmt.Sprintf("the key %q holds a value that is not an election record this version reads: cannot tell who leads", e.Key)
}

// Unwrap makes the error match leadership.ErrForeignValue.
func (e *foreignValueError) Unwrap() error { return leadership.ErrForeignValue }

// unconfirmedError is the outcome of status when the holder of the
// election was not seen renewing its lease within its TTL.
type unconfirmedError struct {
	Leader    string        // the holder's name
	Term      uint64        // its term
	TTL       time.Duration // its lease, as long as status waited
	Renewals  uint64        // the writes of the term the record shows (its seq)
	FromLease bool          // the record is a client-go elector's Lease: Renewals counts nothing
	Why       string        // set when status did not watch: why it is not live
	NoWait    bool          // --no-wait: status did not watch
	LastErr   error         // the last read's error, if the last read failed
}

func (e *unconfirmedError) Error() string {
	var msg string
	switch {
	case e.NoWait && e.FromLease:
		msg = fmt.Sprintf("%s (term %d, TTL %v) holds the Lease, unconfirmed: --no-wait did not watch it renew its lease",
			e.Leader, e.Term, e.TTL)
	case e.NoWait:
		msg = fmt.Sprintf("%s (term %d, TTL %v) holds the record, unconfirmed: --no-wait did not watch it renew its lease; the record shows %d renewals of this term",
			e.Leader, e.Term, e.TTL, e.Renewals)
	case e.Why != "":
		msg = fmt.Sprintf("%s (term %d) is unconfirmed: %s; it has crashed or lost the store (another candidate may take over once its TTL of %v has run out)",
			e.Leader, e.Term, e.Why, e.TTL)
	default:
		msg = fmt.Sprintf("%s (term %d) is unconfirmed: it was not seen renewing its lease within its TTL of %v, and has probably crashed (another candidate may take over once the TTL has run out)",
			e.Leader, e.Term, e.TTL)
	}
	if e.LastErr != nil {
		msg += fmt.Sprintf("; the last read failed: %v", e.LastErr)
	}
	return msg
}

// Unwrap returns the last read's error, if any.
func (e *unconfirmedError) Unwrap() error { return e.LastErr }

// statusReadTimeout bounds the first read of the election, before its TTL
// is known.
const statusReadTimeout = 10 * time.Second

// readElection reads the key with a linearizable read where the backend
// has one. An empty value counts as a missing key, as in the library.
func readElection(ctx context.Context, kv store.Store, key string, timeout time.Duration) (electionState, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pair, err := kv.Get(ctx, key, &store.ReadOptions{Consistent: true})
	at := time.Now()
	switch {
	case errors.Is(err, store.ErrKeyNotFound):
		return electionState{missing: true, at: at}, nil
	case err != nil:
		return electionState{}, fmt.Errorf("read key %q: %w", key, err)
	case pair == nil || len(bytes.TrimSpace(pair.Value)) == 0:
		return electionState{missing: true, at: at}, nil
	}
	rec, ok := electionrecord.Decode(pair.Value)
	if !ok {
		return electionState{}, &foreignValueError{Key: key}
	}
	return electionState{rec: rec, at: at}, nil
}

// statusTiming is how status watches a holder with the given TTL: how often
// it reads, how long one read may take, and the allowance past the TTL
// within which its last read starts.
func statusTiming(ttl time.Duration) (poll, readTimeout, slack time.Duration) {
	poll = min(max(ttl/20, 10*time.Millisecond), 500*time.Millisecond)
	readTimeout = min(max(ttl/3, 100*time.Millisecond), statusReadTimeout)
	slack = min(ttl/10, time.Second)
	return poll, readTimeout, slack
}

// confirmLeader watches the election that first showed held until a read
// shows a write after it, and returns that read: the holder renewed (or a
// new term began: the leader is confirmed), or the election became free,
// ended or vanished. A holder that wrote nothing by the time its TTL (plus
// slack) has passed since the first read is an *unconfirmedError. A live
// holder rewrites its record within its TTL (every renewal lands before its
// lease deadline), so a read started that late sees its renewal.
func confirmLeader(ctx context.Context, kv store.Store, key string, first electionState) (electionState, error) {
	ttl := holderTTL(&first.rec)
	if why := tooFewRenewals(&first.rec, first.at); why != "" {
		return electionState{}, &unconfirmedError{Leader: first.rec.Leader, Term: first.rec.Term, TTL: ttl, Renewals: first.rec.Seq, Why: why}
	}
	poll, readTimeout, slack := statusTiming(ttl)
	deadline := first.at.Add(ttl + slack)
	prev := first
	var lastErr error
	// A watch shows the renewal as it lands (a live leader is confirmed
	// within one renew interval); the reads below, in case a store's watch
	// fails or misses it, and to bound the wait.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watched, werr := kv.Watch(wctx, key, nil)
	if werr != nil {
		watched = nil
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for {
		timer.Reset(max(min(poll, time.Until(deadline)), 0))
		select {
		case <-ctx.Done():
			return electionState{}, interrupted(first)
		case pair, ok := <-watched:
			if !ok {
				watched = nil
				continue
			}
			if pair == nil || len(bytes.TrimSpace(pair.Value)) == 0 {
				continue // a deletion: the read below tells
			}
			rec, ok := electionrecord.Decode(pair.Value)
			if ok && (!heldRecord(&rec) || rec.NewerThan(&prev.rec)) {
				return electionState{rec: rec, at: time.Now()}, nil
			}
			continue
		case <-timer.C:
		}
		started := time.Now()
		s, err := readElection(ctx, kv, key, readTimeout)
		lastErr = err
		switch {
		case errors.Is(err, leadership.ErrForeignValue):
			return electionState{}, err
		case err != nil:
			if ctx.Err() != nil {
				return electionState{}, interrupted(first)
			}
		case !s.held() || s.rec.NewerThan(&prev.rec):
			return s, nil // a write: a renewal, a new term, a release or an end
		case prev.rec.NewerThan(&s.rec):
			prev = s // the store went back in time: only a later write counts
		}
		if !started.Before(deadline) {
			return electionState{}, &unconfirmedError{Leader: first.rec.Leader, Term: first.rec.Term, TTL: ttl, Renewals: prev.rec.Seq, LastErr: lastErr}
		}
	}
}

// statusClockSkew is how far status allows the holder's clock, which
// stamped the start of its term in the record, to be behind this one's.
const statusClockSkew = time.Minute

// tooFewRenewals returns why the holder of rec, read at at, cannot be
// alive, or "" if it may be. A live holder writes its record at least once
// per TTL (every renewal lands before its lease deadline, which is under
// one TTL after the previous renewal began), and every write raises Seq:
// a term that began (by the holder's clock, allowing it statusClockSkew
// behind this one) more TTLs ago than it has writes has a holder that
// stopped renewing, as after a crash long ago.
func tooFewRenewals(rec *electionRecord, at time.Time) string {
	ttl := holderTTL(rec)
	since, err := time.Parse(time.RFC3339Nano, rec.Since)
	if err != nil || ttl <= 0 || rec.FromLeaseSpec() {
		return "" // a Lease's renewTime is no count of renewals
	}
	age := at.Sub(since) - statusClockSkew
	if age <= 0 || uint64(age/ttl) <= rec.Seq+1 {
		return ""
	}
	return fmt.Sprintf("its term began %v ago (at %s) and its record shows %d renewals, where a live holder renews at least once per TTL",
		at.Sub(since).Round(time.Second), rec.Since, rec.Seq)
}

// interrupted is the error of a status stopped (SIGINT, SIGTERM) before it
// could confirm the holder of first.
func interrupted(first electionState) error {
	return fmt.Errorf("interrupted before %s (term %d) was seen renewing its lease", first.rec.Leader, first.rec.Term)
}

// statusJSON is what status --json prints: an observation as follow --json
// prints it, and the holder that was not seen renewing its lease.
type statusJSON struct {
	observationJSON
	Unconfirmed string `json:"unconfirmed,omitempty"`
	// Of an unconfirmed holder: the writes of its term the record shows
	// (absent for a Lease a client-go elector holds: it counts none),
	// when its term began (by its clock) and its lease in milliseconds.
	Renewals *uint64 `json:"renewals,omitempty"`
	Since    string  `json:"since,omitempty"`
	TTLms    int64   `json:"ttl_ms,omitempty"`
}

// runStatus reads the election, waits for the holder (if any) to renew its
// lease, prints what it found and ends with the matching exit code: 0 for a
// confirmed leader, 3 for none, 4 for an ended election, 5 for a holder not
// seen renewing.
func runStatus(ctx context.Context, ef electionFlags, asJSON, noWait bool, s streams) error {
	kv, key, st, err := ef.readOnce(ctx, s.stderr)
	if kv == nil {
		return err
	}
	defer kv.Close()
	if err != nil {
		return statusReadError(err)
	}
	var unconfirmed *unconfirmedError
	var held electionRecord // the holder's record, when unconfirmed
	if st.held() {
		held = st.rec
		if noWait {
			err = &unconfirmedError{Leader: st.rec.Leader, Term: st.rec.Term, TTL: holderTTL(&st.rec), Renewals: st.rec.Seq, FromLease: st.rec.FromLeaseSpec(), NoWait: true}
		} else {
			st, err = confirmLeader(ctx, kv, key, st)
		}
		if errors.As(err, &unconfirmed) {
			st = electionState{rec: electionRecord{Term: unconfirmed.Term}, at: time.Now()}
		} else if err != nil {
			return err
		}
	}
	o := leadership.Status{Token: st.rec.Term, At: st.at}
	if st.held() {
		o.Leader = st.rec.Leader
	}
	if asJSON {
		out := statusJSON{observationJSON: toJSON(o)}
		if unconfirmed != nil {
			out.Unconfirmed = unconfirmed.Leader
			out.Renewals, out.Since, out.TTLms = &held.Seq, held.Since, held.TTLms
			if held.FromLeaseSpec() {
				out.Renewals = nil // a client-go Lease counts no renewals
			}
		}
		err = json.NewEncoder(s.stdout).Encode(out)
	} else {
		_, err = fmt.Fprintln(s.stdout, observationLine(o))
	}
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	switch {
	case unconfirmed != nil:
		return &exitError{code: exitUnconfirmed, err: unconfirmed}
	case !st.missing && st.rec.Ended:
		return endedError(ef.key)
	case o.Leader == "":
		return &exitError{code: exitNoLeader}
	}
	return nil
}

// readOnce opens the store and reads the election at --key once (see
// readElection), under the key as the library names it. kv is nil when
// the store could not be opened (err says why); otherwise the caller
// closes it, whether the read failed or not.
func (e *electionFlags) readOnce(ctx context.Context, stderr io.Writer) (kv store.Store, key string, st electionState, err error) {
	memoryNotice(stderr, e.store, true)
	if kv, err = e.open(ctx); err != nil {
		return nil, "", electionState{}, err
	}
	key = strings.Trim(e.key, "/")
	st, err = readElection(ctx, kv, key, statusReadTimeout)
	return kv, key, st, err
}

// statusReadError is the command's error for a first read that failed: a
// foreign value or a store error (exit 1).
func statusReadError(err error) error {
	var fe *foreignValueError
	if errors.As(err, &fe) {
		return err
	}
	return fmt.Errorf("cannot read the election: %w", err)
}
