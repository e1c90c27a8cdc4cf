//go:build leadership_no_etcd

package main

func init() { leftOut["etcd"] = "this program was built with the tag leadership_no_etcd" }
