package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestObserveServesTheDemo: -observe serves the page, the API and the
// metrics over the busy System, shows the demo tree and its crashes, and
// stops when its context ends.
func TestObserveServesTheDemo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runObserve(ctx, io.Discard, ln, 2000) }()
	base := "http://" + ln.Addr().String()
	getJSON := func(path string, v any) error {
		resp, err := http.Get(base + path)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		return json.NewDecoder(resp.Body).Decode(v)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var tr struct {
			Trees []struct {
				Name     string `json:"name"`
				Restarts int    `json:"restarts"`
			} `json:"trees"`
		}
		if err := getJSON("/api/tree", &tr); err == nil && len(tr.Trees) == 1 && tr.Trees[0].Name == "demo" && tr.Trees[0].Restarts > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo tree never showed a restart (%v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), "Colony observer") {
		t.Fatal("no page")
	}
	// The metrics: the demo's crashes and restarts, and the schedulers'
	// busy time, in the text exposition format.
	resp, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("/metrics: %d %q", resp.StatusCode, ct)
	}
	for _, want := range []string{"\ncolony_supervisor_restarts_total{supervisor=\"demo\"} ", "\ncolony_crash_reports_total ",
		"\ncolony_scheduler_busy_seconds_total{scheduler=\"0\"} ", "\ncolony_actors_live "} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("runObserve did not return after its context ended")
	}
}
