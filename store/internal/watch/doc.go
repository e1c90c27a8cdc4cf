// Package watch holds the pieces the watch code of several backends
// shares: Feed, a watch channel that producers which must never block
// fill with no goroutine of its own while the reader keeps up; Queue, an
// unbounded FIFO between such producers and one consumer goroutine; and
// the context helpers Send, Joined and Sleep.
package watch
