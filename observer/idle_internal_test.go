package observer

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
)

// TestSamplingFollowsUse: the first request turns the System's sampling
// on; a while without one turns it off; the next turns it on again.
func TestSamplingFollowsUse(t *testing.T) {
	sys := testsys.Start(t, actor.Config{})
	o := Handler(sys).(*observer)
	o.cfg.idle = 30 * time.Millisecond
	on := func() bool {
		o.mu.Lock()
		defer o.mu.Unlock()
		return o.observe != nil
	}
	if on() {
		t.Fatal("sampling on before any request")
	}
	ask := func() {
		rec := httptest.NewRecorder()
		o.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/overview", nil))
		if rec.Code != 200 {
			t.Fatalf("overview: %d", rec.Code)
		}
	}
	ask()
	if !on() {
		t.Fatal("sampling off after a request")
	}
	deadline := time.Now().Add(10 * time.Second)
	for on() {
		if time.Now().After(deadline) {
			t.Fatal("sampling still on long after the last request")
		}
		time.Sleep(5 * time.Millisecond)
	}
	ask()
	if !on() {
		t.Fatal("sampling off after a later request")
	}
	// Turn it off before the test ends, so no idle check outlives it.
	for on() {
		if time.Now().After(deadline) {
			t.Fatal("sampling still on")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
