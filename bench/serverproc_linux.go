package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The CPU time a store's server spends, read from /proc: the processes
// listening on its ports, with every process they started (PostgreSQL
// serves each connection in a child), including children already reaped.

// clockTicks is the unit of the times in /proc/PID/stat (USER_HZ, 100 on
// every Linux architecture Go supports).
const clockTicks = 100

// listeners returns the PIDs of the processes listening on 127.0.0.1 or any
// address at the given TCP ports.
func listeners(ports []int) ([]int, error) {
	inodes := map[string]bool{}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(fields[1], ":")
			if !ok {
				continue
			}
			p, err := strconv.ParseInt(hexPort, 16, 32)
			if err != nil {
				continue
			}
			for _, want := range ports {
				if int(p) == want {
					inodes["socket:["+fields[9]+"]"] = true
				}
			}
		}
		_ = f.Close()
	}
	if len(inodes) == 0 {
		return nil, fmt.Errorf("nothing listens on port(s) %v", ports)
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	seen := map[int]bool{}
	var pids []int
	for _, fd := range fds {
		link, err := os.Readlink(fd)
		if err != nil || !inodes[link] {
			continue
		}
		pid, err := strconv.Atoi(strings.Split(fd, "/")[2])
		if err == nil && !seen[pid] {
			seen[pid] = true
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		return nil, fmt.Errorf("no process found for the listener(s) on port(s) %v (another user's?)", ports)
	}
	return pids, nil
}

// procStat is what the bench reads of /proc/PID/stat.
type procStat struct {
	ppid     int
	cpu      int64 // utime + stime, ticks
	children int64 // cutime + cstime: children already reaped, ticks
}

func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name, in parentheses, may hold spaces: the fields
	// that follow its last ')' start with the state (field 3).
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	n := func(k int) int64 { v, _ := strconv.ParseInt(f[k-3], 10, 64); return v }
	return procStat{ppid: int(n(4)), cpu: n(14) + n(15), children: n(16) + n(17)}, nil
}

// treeCPU returns the CPU time of the processes roots and of all their
// descendants, living or reaped.
func treeCPU(roots []int) (time.Duration, error) {
	stats := map[int]procStat{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if st, err := readProcStat(pid); err == nil {
			stats[pid] = st
		}
	}
	kids := map[int][]int{}
	for pid, st := range stats {
		kids[st.ppid] = append(kids[st.ppid], pid)
	}
	var ticks int64
	var walk func(pid int)
	walk = func(pid int) {
		st, ok := stats[pid]
		if !ok {
			return
		}
		ticks += st.cpu + st.children
		for _, k := range kids[pid] {
			walk(k)
		}
	}
	for _, r := range roots {
		if _, ok := stats[r]; !ok {
			return 0, fmt.Errorf("process %d is gone", r)
		}
		walk(r)
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
