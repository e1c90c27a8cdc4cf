//go:build unix

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// memoryClaims are the memory:// names this process holds, with how many
// of its commands use each: within one process the store is shared, and
// only another process is worth a warning.
var memoryClaims = struct {
	sync.Mutex
	held map[string]*memoryClaim
}{held: make(map[string]*memoryClaim)}

// memoryClaim is the lock file of a name and the count of its users.
type memoryClaim struct {
	f    *os.File
	refs int
}

// claimMemoryName takes an advisory lock, on this machine, on the name
// of a memory:// store. other describes the process that holds it ("pid
// 123"), or is "" when this process holds it; release gives it back.
func claimMemoryName(name string) (release func(), other string) {
	memoryClaims.Lock()
	defer memoryClaims.Unlock()
	if c, ok := memoryClaims.held[name]; ok {
		c.refs++
		return sync.OnceFunc(func() { dropMemoryClaim(name) }), ""
	}
	sum := sha256.Sum256([]byte(name))
	path := filepath.Join(os.TempDir(), "leadership-memory-"+hex.EncodeToString(sum[:8])+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return func() {}, "" // no lock, no warning: the notice is a courtesy
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		_ = f.Close()
		if pid := strings.TrimSpace(string(b[:n])); pid != "" {
			return func() {}, "pid " + pid
		}
		return func() {}, "a process"
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	memoryClaims.held[name] = &memoryClaim{f: f, refs: 1}
	return sync.OnceFunc(func() { dropMemoryClaim(name) }), ""
}

// dropMemoryClaim releases one use of name, and its lock with the last.
func dropMemoryClaim(name string) {
	memoryClaims.Lock()
	defer memoryClaims.Unlock()
	c := memoryClaims.held[name]
	if c == nil {
		return
	}
	if c.refs--; c.refs == 0 {
		_ = c.f.Close()
		delete(memoryClaims.held, name)
	}
}
