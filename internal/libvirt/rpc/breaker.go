package rpc

import (
	"fmt"
	"sync"
	"time"
)

// breaker stops a dead host from costing every resource its own full dial timeout: after
// `threshold` consecutive failed dials the URI is "open" for `cooldown`, and callers fail
// at once with the first cause. After the cool-down one caller may try again (half-open):
// success closes the breaker, failure opens it for another cool-down.
type breaker struct {
	threshold int
	cooldown  time.Duration
	now       func() time.Time

	mu        sync.Mutex
	failures  int
	firstErr  error // first failure of the current streak: usually the real cause
	openUntil time.Time
	probing   bool // a half-open trial dial is under way
}

// BreakerOpenError is returned without dialling while the breaker is open.
type BreakerOpenError struct {
	Failures int
	Until    time.Time
	Cause    error
}

func (e *BreakerOpenError) Error() string {
	return fmt.Sprintf("not dialling: the last %d attempts to connect failed, next try after %s; first cause: %v",
		e.Failures, e.Until.Format(time.TimeOnly), e.Cause)
}
func (e *BreakerOpenError) Unwrap() error { return e.Cause }

// allow says whether a dial may be tried now.
func (b *breaker) allow() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failures < b.threshold {
		return nil
	}
	if b.now().Before(b.openUntil) || b.probing {
		return &BreakerOpenError{Failures: b.failures, Until: b.openUntil, Cause: b.firstErr}
	}
	b.probing = true // half-open: this caller tries once
	return nil
}

func (b *breaker) success() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures, b.firstErr, b.probing = 0, nil, false
}

func (b *breaker) failure(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failures == 0 {
		b.firstErr = err
	}
	b.failures++
	b.probing = false
	if b.failures >= b.threshold {
		b.openUntil = b.now().Add(b.cooldown)
	}
}

// abandon ends a trial dial that the caller gave up on, without judging the host.
func (b *breaker) abandon() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
}
