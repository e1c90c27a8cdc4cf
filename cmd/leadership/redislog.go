//go:build !leadership_no_redis

package main

import (
	"context"

	goredis "github.com/redis/go-redis/v9"
)

// go-redis logs failed dials through its own logger, a second line beside
// the command's own error ("redis: ... failed to dial after 1 attempts");
// the command reports every store error itself, once.
func init() { goredis.SetLogger(silentRedisLog{}) }

// silentRedisLog drops go-redis' log lines.
type silentRedisLog struct{}

func (silentRedisLog) Printf(context.Context, string, ...any) {}
