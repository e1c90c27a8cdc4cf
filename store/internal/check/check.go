// Package check holds the assertions of the adapters' tests, on the
// standard library only: a Checker reports a failed check with t.Errorf
// (Expect) or t.Fatalf (Must). Each check takes an optional message: a
// format and its arguments, or values printed as fmt.Sprint does.
package check

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Checker runs checks; a failed one fails the test, and stops it when
// the Checker is Must.
type Checker struct{ fatal bool }

var (
	// Must stops the test at the first failed check (t.Fatalf).
	Must = Checker{fatal: true}
	// Expect marks the test failed and goes on (t.Errorf).
	Expect = Checker{}
)

// fail reports what went wrong, with the caller's message if any.
func (c Checker) fail(t testing.TB, what string, msg []any) bool {
	t.Helper()
	if m := message(msg); m != "" {
		what += ": " + m
	}
	if c.fatal {
		t.Fatal(what)
	} else {
		t.Error(what)
	}
	return false
}

// message formats msg: a format string and its arguments, or values.
func message(msg []any) string {
	if len(msg) == 0 {
		return ""
	}
	if f, ok := msg[0].(string); ok && len(msg) > 1 && strings.Contains(f, "%") {
		return fmt.Sprintf(f, msg[1:]...)
	}
	return fmt.Sprint(msg...)
}

// NoError checks that err is nil.
func (c Checker) NoError(t testing.TB, err error, msg ...any) bool {
	t.Helper()
	if err != nil {
		return c.fail(t, fmt.Sprintf("unexpected error: %v", err), msg)
	}
	return true
}

// Error checks that err is not nil.
func (c Checker) Error(t testing.TB, err error, msg ...any) bool {
	t.Helper()
	if err == nil {
		return c.fail(t, "an error was expected, got nil", msg)
	}
	return true
}

// ErrorIs checks errors.Is(err, target).
func (c Checker) ErrorIs(t testing.TB, err, target error, msg ...any) bool {
	t.Helper()
	if !errors.Is(err, target) {
		return c.fail(t, fmt.Sprintf("error %v (%T) does not match %v", err, err, target), msg)
	}
	return true
}

// NotErrorIs checks !errors.Is(err, target).
func (c Checker) NotErrorIs(t testing.TB, err, target error, msg ...any) bool {
	t.Helper()
	if errors.Is(err, target) {
		return c.fail(t, fmt.Sprintf("error %v matches %v", err, target), msg)
	}
	return true
}

// ErrorAs checks errors.As(err, target).
func (c Checker) ErrorAs(t testing.TB, err error, target any, msg ...any) bool {
	t.Helper()
	if !errors.As(err, target) {
		return c.fail(t, fmt.Sprintf("error %v (%T) is not a %T", err, err, target), msg)
	}
	return true
}

// Equal checks that got equals want: bytes.Equal for byte slices,
// reflect.DeepEqual otherwise (so values of different types differ).
func (c Checker) Equal(t testing.TB, want, got any, msg ...any) bool {
	t.Helper()
	if !equal(want, got) {
		return c.fail(t, fmt.Sprintf("got %#v, want %#v", got, want), msg)
	}
	return true
}

func equal(want, got any) bool {
	wb, ok1 := want.([]byte)
	gb, ok2 := got.([]byte)
	if ok1 && ok2 {
		return bytes.Equal(wb, gb)
	}
	return reflect.DeepEqual(want, got)
}

// True checks that v is true.
func (c Checker) True(t testing.TB, v bool, msg ...any) bool {
	t.Helper()
	if !v {
		return c.fail(t, "should be true", msg)
	}
	return true
}

// False checks that v is false.
func (c Checker) False(t testing.TB, v bool, msg ...any) bool {
	t.Helper()
	if v {
		return c.fail(t, "should be false", msg)
	}
	return true
}

// isNil reports whether v is nil or a nil pointer, slice, map, channel,
// function or interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice, reflect.UnsafePointer:
		return r.IsNil()
	}
	return false
}

// Nil checks that v is nil (see isNil).
func (c Checker) Nil(t testing.TB, v any, msg ...any) bool {
	t.Helper()
	if !isNil(v) {
		return c.fail(t, fmt.Sprintf("expected nil, got %#v", v), msg)
	}
	return true
}

// NotNil checks that v is not nil (see isNil).
func (c Checker) NotNil(t testing.TB, v any, msg ...any) bool {
	t.Helper()
	if isNil(v) {
		return c.fail(t, "expected a value, got nil", msg)
	}
	return true
}

// empty reports whether v is nil, of length 0, a pointer to an empty
// value, or its type's zero value.
func empty(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Array, reflect.Chan, reflect.Map, reflect.Slice, reflect.String:
		return r.Len() == 0
	case reflect.Pointer:
		return r.IsNil() || empty(r.Elem().Interface())
	}
	return r.IsZero()
}

// Empty checks that v is empty (see empty).
func (c Checker) Empty(t testing.TB, v any, msg ...any) bool {
	t.Helper()
	if !empty(v) {
		return c.fail(t, fmt.Sprintf("should be empty: %#v", v), msg)
	}
	return true
}

// Len checks that v (an array, slice, map, channel or string) has n
// elements.
func (c Checker) Len(t testing.TB, v any, n int, msg ...any) bool {
	t.Helper()
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Array, reflect.Chan, reflect.Map, reflect.Slice, reflect.String:
		if r.Len() != n {
			return c.fail(t, fmt.Sprintf("has %d elements, want %d: %#v", r.Len(), n, v), msg)
		}
		return true
	}
	return c.fail(t, fmt.Sprintf("%T has no length", v), msg)
}

// Contains checks that s (a string) holds the substring elem, or that s
// (a slice or array) holds an element equal to elem, or that s (a map) has
// the key elem.
func (c Checker) Contains(t testing.TB, s, elem any, msg ...any) bool {
	t.Helper()
	if str, ok := s.(string); ok {
		if sub, ok := elem.(string); ok && strings.Contains(str, sub) {
			return true
		}
		return c.fail(t, fmt.Sprintf("%q does not contain %#v", str, elem), msg)
	}
	r := reflect.ValueOf(s)
	switch r.Kind() {
	case reflect.Array, reflect.Slice:
		for i := range r.Len() {
			if equal(r.Index(i).Interface(), elem) {
				return true
			}
		}
	case reflect.Map:
		for _, k := range r.MapKeys() {
			if equal(k.Interface(), elem) {
				return true
			}
		}
	}
	return c.fail(t, fmt.Sprintf("%#v does not contain %#v", s, elem), msg)
}

// compare returns -1, 0 or 1 as a is less than, equal to or greater than
// b: two numbers of one kind, two strings or two time.Time values.
func compare(a, b any) (int, bool) {
	if ta, ok := a.(time.Time); ok {
		if tb, ok := b.(time.Time); ok {
			return ta.Compare(tb), true
		}
		return 0, false
	}
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	if !ra.IsValid() || !rb.IsValid() || ra.Type() != rb.Type() {
		return 0, false
	}
	switch ra.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return cmp3(ra.Int() < rb.Int(), ra.Int() > rb.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return cmp3(ra.Uint() < rb.Uint(), ra.Uint() > rb.Uint()), true
	case reflect.Float32, reflect.Float64:
		return cmp3(ra.Float() < rb.Float(), ra.Float() > rb.Float()), true
	case reflect.String:
		return strings.Compare(ra.String(), rb.String()), true
	}
	return 0, false
}

func cmp3(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}

// order checks that compare(a, b) is one of ok.
func (c Checker) order(t testing.TB, a, b any, rel string, msg []any, ok ...int) bool {
	t.Helper()
	r, comparable := compare(a, b)
	if !comparable {
		return c.fail(t, fmt.Sprintf("cannot compare %#v (%T) with %#v (%T)", a, a, b, b), msg)
	}
	for _, o := range ok {
		if r == o {
			return true
		}
	}
	return c.fail(t, fmt.Sprintf("%v is not %s %v", a, rel, b), msg)
}

// Greater checks a > b.
func (c Checker) Greater(t testing.TB, a, b any, msg ...any) bool {
	t.Helper()
	return c.order(t, a, b, "greater than", msg, 1)
}

// GreaterOrEqual checks a >= b.
func (c Checker) GreaterOrEqual(t testing.TB, a, b any, msg ...any) bool {
	t.Helper()
	return c.order(t, a, b, "greater than or equal to", msg, 1, 0)
}

// Less checks a < b.
func (c Checker) Less(t testing.TB, a, b any, msg ...any) bool {
	t.Helper()
	return c.order(t, a, b, "less than", msg, -1)
}

// LessOrEqual checks a <= b.
func (c Checker) LessOrEqual(t testing.TB, a, b any, msg ...any) bool {
	t.Helper()
	return c.order(t, a, b, "less than or equal to", msg, -1, 0)
}

// Positive checks v > 0, v being a number.
func (c Checker) Positive(t testing.TB, v any, msg ...any) bool {
	t.Helper()
	zero := reflect.Zero(reflect.TypeOf(v)).Interface()
	return c.order(t, v, zero, "greater than", msg, 1)
}

// Eventually checks that cond becomes true within waitFor, trying every
// tick.
func (c Checker) Eventually(t testing.TB, cond func() bool, waitFor, tick time.Duration, msg ...any) bool {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return c.fail(t, fmt.Sprintf("condition not met within %v", waitFor), msg)
		}
		time.Sleep(tick)
	}
}

// FailNow fails the test with what and stops it (whatever the Checker).
func (c Checker) FailNow(t testing.TB, what string, msg ...any) bool {
	t.Helper()
	return Must.fail(t, what, msg)
}

// FailNowf is FailNow with a format and its arguments.
func (c Checker) FailNowf(t testing.TB, what, format string, args ...any) bool {
	t.Helper()
	return Must.fail(t, what, []any{fmt.Sprintf(format, args...)})
}
