//go:build leadership_no_postgres

package main

func init() { leftOut["postgres"] = "this program was built with the tag leadership_no_postgres" }
