package postgres

import (
	"encoding/base64"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Event operations (see the payload format in schema.go).
const (
	opPut    = 'P'
	opDelete = 'D'
	opResync = 'R'
)

// event is one decoded notification.
type event struct {
	op       byte
	idx      uint64
	xid      uint64
	lockID   string
	expMs    int64 // milliseconds until the new row expires, if hasExp
	hasExp   bool
	value    []byte // the new value, if hasValue
	hasValue bool
	key      string
}

var errPayload = errors.New("postgres: malformed notification payload")

func parseEvent(payload string) (event, error) {
	f := strings.SplitN(payload, ":", 7)
	if len(f) != 7 || len(f[0]) != 1 {
		return event{}, errPayload
	}

	ev := event{op: f[0][0], lockID: f[3], key: f[6]}

	var err error
	if ev.idx, err = strconv.ParseUint(f[1], 10, 64); err != nil {
		return event{}, errPayload
	}

	if ev.xid, err = strconv.ParseUint(f[2], 10, 64); err != nil {
		return event{}, errPayload
	}

	switch ev.op {
	case opResync, opDelete:
		return ev, nil
	case opPut:
	default:
		return event{}, errPayload
	}

	if f[4] != "" {
		if ev.expMs, err = strconv.ParseInt(f[4], 10, 64); err != nil {
			return event{}, errPayload
		}
		ev.hasExp = true
	}

	if f[5] != "-" {
		// An undecodable value is fetched instead.
		if v, err := base64.StdEncoding.DecodeString(f[5]); err == nil {
			ev.value, ev.hasValue = nonNil(v), true
		}
	}

	return ev, nil
}

// snapshot is a parsed pg_snapshot ("xmin:xmax:xip,..."): the transactions
// whose effects a read saw.
type snapshot struct {
	xmin, xmax uint64
	xip        []uint64 // sorted
}

func parseSnapshot(s string) (snapshot, error) {
	f := strings.Split(s, ":")
	if len(f) != 3 {
		return snapshot{}, errors.New("postgres: malformed snapshot " + strconv.Quote(s))
	}

	var sn snapshot
	var err error
	if sn.xmin, err = strconv.ParseUint(f[0], 10, 64); err != nil {
		return snapshot{}, err
	}

	if sn.xmax, err = strconv.ParseUint(f[1], 10, 64); err != nil {
		return snapshot{}, err
	}

	if f[2] != "" {
		for _, x := range strings.Split(f[2], ",") {
			v, err := strconv.ParseUint(x, 10, 64)
			if err != nil {
				return snapshot{}, err
			}
			sn.xip = append(sn.xip, v)
		}
		slices.Sort(sn.xip)
	}

	return sn, nil
}

// visible reports whether the committed transaction xid was visible to the
// read that took the snapshot, i.e. whether that read already reflects it.
func (sn snapshot) visible(xid uint64) bool {
	if xid < sn.xmin {
		return true
	}

	if xid >= sn.xmax {
		return false
	}

	_, found := slices.BinarySearch(sn.xip, xid)

	return !found
}
