package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// durationFlag defines a duration flag on fs, as fs.DurationVar does, whose
// errors say what a duration looks like: "15 is not a duration (did you
// mean 15s?)".
func durationFlag(fs *flag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var((*durationValue)(p), name, usage)
}

// durationValue is a time.Duration as a flag.Value.
type durationValue time.Duration

func (d *durationValue) String() string { return (*time.Duration)(d).String() }

func (d *durationValue) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

// parseDuration is time.ParseDuration with an error a user can act on.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err == nil {
		return d, nil
	}
	if _, numErr := strconv.ParseFloat(s, 64); numErr == nil {
		return 0, fmt.Errorf("%s is not a duration (did you mean %ss?)", s, s)
	}
	return 0, fmt.Errorf("%q is not a duration: give a number and a unit, as in 15s, 500ms or 2m", s)
}
