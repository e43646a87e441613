package main

import (
	"testing"
	"time"
)

// The retry delay doubles and is capped; it never overflows into a
// negative (immediate) delay, however many retries a job allows.
func TestRetryDelayDoublesAndIsCapped(t *testing.T) {
	base := 100 * time.Millisecond
	for attempt, want := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
		if got := retryDelay(base, attempt); got != want {
			t.Fatalf("attempt %d: %v; want %v", attempt, got, want)
		}
	}
	for _, attempt := range []int{36, 37, 63, 64, 1000} {
		if got := retryDelay(base, attempt); got != maxRetryDelay {
			t.Fatalf("attempt %d: %v; want the cap %v", attempt, got, maxRetryDelay)
		}
	}
}
