//go:build leadership_no_redis

package open

// redisBackend is left out of this build by the tag leadership_no_redis: its
// schemes are refused with ErrBackendLeftOut, and its adapter and client
// libraries are not linked.
var redisBackend = backend{name: "redis", schemes: []string{"redis", "rediss"}}
