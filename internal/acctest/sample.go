package acctest

import (
	"sync"
	"time"
)

// Sample calls f every interval, in a goroutine of its own, until stop is called: the
// measuring loop of the tests that watch something (connections, heap) while an apply
// runs. stop returns once f has returned for the last time, so what f wrote can be read
// without a lock after it; calling stop again does nothing (it suits t.Cleanup too).
func Sample(interval time.Duration, f func()) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-time.After(interval):
			}
			f()
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}
