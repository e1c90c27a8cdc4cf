//go:build leadership_no_redis

package main

func init() { leftOut["redis"] = "this program was built with the tag leadership_no_redis" }
