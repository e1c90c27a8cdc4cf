//go:build leadership_no_kubernetes

package main

func init() { leftOut["kubernetes"] = "this program was built with the tag leadership_no_kubernetes" }
