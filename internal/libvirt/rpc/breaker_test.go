package rpc

import (
	"errors"
	"testing"
	"time"
)

func TestBreaker(t *testing.T) {
	now := time.Unix(1000, 0)
	b := &breaker{threshold: 3, cooldown: 30 * time.Second, now: func() time.Time { return now }}
	first := errors.New("connection refused")
	for i := range 3 {
		if err := b.allow(); err != nil {
			t.Fatalf("attempt %d refused before the threshold: %v", i, err)
		}
		if i == 0 {
			b.failure(first)
		} else {
			b.failure(errors.New("later failure"))
		}
	}
	err := b.allow()
	var open *BreakerOpenError
	if !errors.As(err, &open) || !errors.Is(err, first) {
		t.Fatalf("after 3 failures: want open breaker naming the first cause, got %v", err)
	}
	now = now.Add(31 * time.Second)
	if err := b.allow(); err != nil {
		t.Fatalf("after the cool-down one trial must be allowed: %v", err)
	}
	if err := b.allow(); err == nil {
		t.Fatal("a second caller got through while the trial runs")
	}
	b.abandon()
	if err := b.allow(); err != nil {
		t.Fatalf("an abandoned trial must let the next caller try: %v", err)
	}
	b.success()
	if err := b.allow(); err != nil || b.failures != 0 {
		t.Fatalf("success must close the breaker: %v", err)
	}
}
