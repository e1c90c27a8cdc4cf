// Package workpool runs a function over the indexes 0..n-1 on a bounded
// number of goroutines: the test suites start and stop many elections
// this way without a goroutine each.
package workpool

import "sync"

// Each calls f(i) for every i in [0, n) on at most workers goroutines (at
// least one), and returns when every call has returned.
func Each(n, workers int, f func(i int)) {
	workers = max(1, min(workers, n))
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
