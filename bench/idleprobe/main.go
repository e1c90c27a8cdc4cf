// Command idleprobe counts what idle elections hold in one process: the
// goroutines and heap per election (two candidates and a follower each,
// every channel read), and, with -profile, where those goroutines wait.
// It is the quick check beside `bench --scale`, for one store at a time:
//
//	go -C bench run ./idleprobe memory://probe
//	go -C bench run ./idleprobe -n 1000 -profile etcd://127.0.0.1:2379
//	go -C bench run ./idleprobe -heap /tmp/heap.pprof -cpu /tmp/cpu.pprof memory://probe
//
// A heap profile (-heap) is written after the counts, for
// `go tool pprof -sample_index=inuse_space`; a CPU profile (-cpu) covers
// the start and the settle.
//
// The goroutines that read the channels (6 per election) are left out of
// the count.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/leadership-go/leadership"
	_ "github.com/leadership-go/leadership/store/all"
	"github.com/leadership-go/leadership/store/open"
)

func main() {
	n := flag.Int("n", 1000, "elections")
	settle := flag.Duration("settle", 5*time.Second, "wait after the start before counting")
	profile := flag.Bool("profile", false, "print the goroutine profile after the counts")
	heap := flag.String("heap", "", "write a heap profile to this file after the counts")
	cpu := flag.String("cpu", "", "write a CPU profile of the start and the settle to this file")
	flag.Parse()
	url := "memory://idleprobe"
	if flag.NArg() > 0 {
		url = flag.Arg(0)
	}
	if *cpu != "" {
		f, err := os.Create(*cpu)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "idleprobe:", err)
			os.Exit(1)
		}
		defer f.Close()
	}
	if err := run(url, *n, *settle, *profile, *heap, *cpu != ""); err != nil {
		fmt.Fprintln(os.Stderr, "idleprobe:", err)
		os.Exit(1)
	}
}

// readers is how many goroutines the probe itself starts per election.
const readers = 6

func run(url string, n int, settle time.Duration, profile bool, heap string, cpu bool) error {
	st, err := open.Store(context.Background(), url)
	if err != nil {
		return err
	}
	defer st.Close()
	base := runtime.NumGoroutine()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	prefix := fmt.Sprintf("idleprobe/%d", time.Now().UnixNano())
	began := time.Now()
	var stops []func()
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	for i := range n {
		key := fmt.Sprintf("%s/%d", prefix, i)
		for j := range 2 {
			c := leadership.NewCandidate(st, key, fmt.Sprintf("n%d", j), 30*time.Second)
			elected, errs, err := c.RunForElection()
			if err != nil {
				return err
			}
			stops = append(stops, c.Stop)
			go drain(elected)
			go drain(errs)
		}
		f := leadership.NewFollower(st, key)
		leaders, errs, err := f.FollowElection()
		if err != nil {
			return err
		}
		stops = append(stops, f.Stop)
		go drain(leaders)
		go drain(errs)
	}
	fmt.Printf("%s: %d elections started in %v\n", url, n, time.Since(began).Round(time.Millisecond))
	time.Sleep(settle)
	if cpu {
		pprof.StopCPUProfile()
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	fmt.Printf("%s: %d elections: %.1f goroutines and %.1f KiB of heap per election\n", url, n,
		float64(runtime.NumGoroutine()-base)/float64(n)-readers,
		float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(n)/1024)
	if heap != "" {
		if err := writeHeap(heap); err != nil {
			return err
		}
	}
	if profile {
		return pprof.Lookup("goroutine").WriteTo(os.Stdout, 1)
	}
	return nil
}

// writeHeap writes the heap profile to path.
func writeHeap(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func drain[T any](ch <-chan T) {
	for range ch {
	}
}
