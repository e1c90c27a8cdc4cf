//go:build leadership_no_zookeeper

package main

func init() { leftOut["zookeeper"] = "this program was built with the tag leadership_no_zookeeper" }
