//go:build !leadership_no_redis

package main

// The redis backend, a module of its own: importing its adapter registers
// its schemes (redis rediss) with store/open. The tag leadership_no_redis
// leaves it, and its client libraries, out of the command.
import _ "github.com/leadership-go/leadership/store/redis"
