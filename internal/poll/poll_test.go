package poll

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestUntilDone(t *testing.T) {
	n := 0
	err := Until(context.Background(), Options{Every: time.Millisecond}, func(context.Context) (bool, error) {
		n++
		return n == 3, nil
	})
	if err != nil || n != 3 {
		t.Fatalf("err %v after %d checks", err, n)
	}
}

func TestUntilCheckError(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	err := Until(context.Background(), Options{Every: time.Millisecond}, func(context.Context) (bool, error) { n++; return false, boom })
	if !errors.Is(err, boom) || n != 1 {
		t.Fatalf("err %v after %d checks", err, n)
	}
}

func TestUntilTimeout(t *testing.T) {
	start := time.Now()
	n := 0
	err := Until(context.Background(), Options{Every: 20 * time.Millisecond, Timeout: 70 * time.Millisecond},
		func(context.Context) (bool, error) { n++; return false, nil })
	el := time.Since(start)
	if !errors.Is(err, ErrTimeout) || el < 70*time.Millisecond || n < 2 {
		t.Fatalf("err %v after %s and %d checks", err, el, n)
	}
}

func TestUntilContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err := Until(ctx, Options{Every: time.Hour}, func(context.Context) (bool, error) { return false, nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
}

// TestUntilBackoff: pauses grow by Factor up to Max.
func TestUntilBackoff(t *testing.T) {
	var at []time.Time
	_ = Until(context.Background(), Options{Every: 10 * time.Millisecond, Max: 40 * time.Millisecond, Factor: 2},
		func(context.Context) (bool, error) { at = append(at, time.Now()); return len(at) == 5, nil })
	var gaps []time.Duration
	for i := 1; i < len(at); i++ {
		gaps = append(gaps, at[i].Sub(at[i-1]))
	}
	want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond}
	for i, g := range gaps {
		if g < want[i] { // lower bounds only: a busy machine may pause longer
			t.Errorf("gaps %v, want about %v ms", gaps, want)
			break
		}
	}
}
