package check

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Helper()           {}
func (r *recorder) Error(args ...any) { r.failed = append(r.failed, fmt.Sprint(args...)) }
func (r *recorder) Fatal(args ...any) { r.failed = append(r.failed, fmt.Sprint(args...)) }

func TestChecks(t *testing.T) {
	errX := errors.New("x")
	for _, c := range []struct {
		name string
		run  func(tb testing.TB) bool
		ok   bool
	}{
		{"NoError nil", func(tb testing.TB) bool { return Expect.NoError(tb, nil) }, true},
		{"NoError err", func(tb testing.TB) bool { return Expect.NoError(tb, errX) }, false},
		{"ErrorIs wrapped", func(tb testing.TB) bool { return Expect.ErrorIs(tb, fmt.Errorf("w: %w", errX), errX) }, true},
		{"ErrorIs other", func(tb testing.TB) bool { return Expect.ErrorIs(tb, errors.New("y"), errX) }, false},
		{"Equal bytes nil and empty", func(tb testing.TB) bool { return Expect.Equal(tb, []byte{}, []byte(nil)) }, true},
		{"Equal types differ", func(tb testing.TB) bool { return Expect.Equal(tb, 1, int64(1)) }, false},
		{"Nil typed nil", func(tb testing.TB) bool { return Expect.Nil(tb, (*int)(nil)) }, true},
		{"Empty zero struct", func(tb testing.TB) bool { return Expect.Empty(tb, struct{ A int }{}) }, true},
		{"Empty slice", func(tb testing.TB) bool { return Expect.Empty(tb, []int{1}) }, false},
		{"Len", func(tb testing.TB) bool { return Expect.Len(tb, map[int]int{1: 1}, 1) }, true},
		{"Contains string", func(tb testing.TB) bool { return Expect.Contains(tb, "abc", "b") }, true},
		{"Contains slice", func(tb testing.TB) bool { return Expect.Contains(tb, []string{"a"}, "b") }, false},
		{"Greater uint64", func(tb testing.TB) bool { return Expect.Greater(tb, uint64(2), uint64(1)) }, true},
		{"Greater equal", func(tb testing.TB) bool { return Expect.Greater(tb, 1, 1) }, false},
		{"GreaterOrEqual durations", func(tb testing.TB) bool { return Expect.GreaterOrEqual(tb, time.Second, time.Second) }, true},
		{"Less kinds differ", func(tb testing.TB) bool { return Expect.Less(tb, 1, 2.0) }, false},
		{"Positive", func(tb testing.TB) bool { return Expect.Positive(tb, int64(3)) }, true},
		{"Eventually", func(tb testing.TB) bool {
			n := 0
			return Expect.Eventually(tb, func() bool { n++; return n > 2 }, time.Minute, time.Millisecond)
		}, true},
	} {
		r := &recorder{TB: t}
		if got := c.run(r); got != c.ok || (len(r.failed) == 0) != c.ok {
			t.Errorf("%s: returned %v with failures %q, want %v", c.name, got, r.failed, c.ok)
		}
	}
}
