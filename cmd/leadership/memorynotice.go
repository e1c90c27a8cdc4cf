package main

import (
	"fmt"
	"io"

	"github.com/leadership-go/leadership/internal/memfault"
	"github.com/leadership-go/leadership/store/open"
)

// memoryNotice warns, on w, that memory://NAME is this process's own
// store. It is called before the store is opened. reader is true for the
// commands that only read the election (status, follow, proxy, end,
// delete), warned when no handle of this process has opened NAME yet:
// they would see an empty store;
// a candidate (run) is warned only when another process on this machine
// runs on the same memory://NAME: both would lead, each in its own store.
// It returns a release func to call when the command no longer uses the
// store.
func memoryNotice(w io.Writer, storeURL string, reader bool) (release func()) {
	spec, err := open.Parse(storeURL)
	if err != nil || spec.Scheme != "memory" || len(spec.Endpoints) == 0 {
		return func() {}
	}
	name := spec.Endpoints[0]
	if reader {
		if memfault.InUse(name) {
			return func() {}
		}
		fmt.Fprintf(w, "leadership: warning: memory://%s is an embedded store inside this process: it starts empty and no other process can reach it, so this sees no election; use a server's URL (etcd://, redis://, ...) to share one\n", name)
		return func() {}
	}
	release, other := claimMemoryName(name)
	if other != "" {
		fmt.Fprintf(w, "leadership: warning: another process (%s) runs on memory://%s, but each process has its own embedded store: both will lead; use a server's URL (etcd://, redis://, ...) to elect one\n", other, name)
	}
	return release
}
