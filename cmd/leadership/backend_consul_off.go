//go:build leadership_no_consul

package main

func init() { leftOut["consul"] = "this program was built with the tag leadership_no_consul" }
