package acctest

import (
	"fmt"
	"time"
)

// Sample runs f until stop; after stop, f has returned for the last time.
func ExampleSample() {
	n := 0
	stop := Sample(time.Millisecond, func() { n++ })
	time.Sleep(50 * time.Millisecond)
	stop()
	stop() // a second stop does nothing
	got := n
	time.Sleep(10 * time.Millisecond)
	fmt.Println("ran:", got > 0, "ran after stop:", n != got)
	// Output: ran: true ran after stop: false
}
