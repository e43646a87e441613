package observer

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/colonyrt/colony/actor"
)

// BenchmarkObserverOn1MIdleActors: the observer's answer time on a
// System of 1M idle actors: the sorted process table with a fresh scan
// every request (the worst case: one a second at most in use), the same
// from the last scan, a page of the whole table by cursor, the overview
// and an actor's detail. docs/benchmarks.md, "Observability cost".
//
//	go test -run '^$' -bench ObserverOn1M -benchtime 10x ./observer/
func BenchmarkObserverOn1MIdleActors(b *testing.B) {
	const n = 1_000_000
	sys, err := actor.Start(actor.Config{MaxActors: n + 1024})
	if err != nil {
		b.Fatal(err)
	}
	defer sys.Shutdown(context.Background())
	idle := actor.ActorFunc(func(*actor.Context, any) {})
	var some actor.Pid
	for i := 0; i < n; i++ {
		pid, err := sys.Spawn(idle)
		if err != nil {
			b.Fatal(err)
		}
		if i == n/2 {
			some = pid
		}
	}
	o := Handler(sys).(*observer)
	ask := func(b *testing.B, path string) {
		rec := httptest.NewRecorder()
		o.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != 200 {
			b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
	for _, c := range []struct {
		name, path string
		fresh      bool
	}{
		{"sorted-fresh-scan", "/api/actors?sort=mailbox&limit=50", true},
		{"sorted-last-scan", "/api/actors?sort=rate&limit=50", false},
		{"cursor-page", "/api/actors?limit=50&cursor=500000", false},
		{"overview", "/api/overview", false},
		{"detail", "/api/actor?peek=10&pid=" + some.String(), false},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.fresh {
				o.cfg.scanGap = 0
			} else {
				o.cfg.scanGap = 1 << 62
				ask(b, "/api/actors?sort=mailbox&limit=1") // one scan to read from
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ask(b, c.path)
			}
		})
	}
}
