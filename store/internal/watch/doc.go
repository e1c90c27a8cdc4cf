// Package watch holds the pieces the watch code of several backends
// shares: Queue, an unbounded FIFO between a producer that must never
// block and one delivery goroutine, and the context helpers Send, Joined
// and Sleep.
package watch
