package acctest

import (
	"testing"
	"time"
)

func TestSample(t *testing.T) {
	n := 0
	stop := Sample(time.Millisecond, func() { n++ })
	time.Sleep(50 * time.Millisecond)
	stop()
	stop() // a second stop does nothing
	if n == 0 {
		t.Fatal("f never ran in 50ms at a 1ms interval")
	}
	got := n
	time.Sleep(10 * time.Millisecond)
	if n != got {
		t.Fatalf("f ran after stop: %d calls, then %d", got, n)
	}
}
