package observer

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// The event stream (server-sent events).
//
// One sampler goroutine per observer runs while at least one stream is
// open: every cfg.interval it takes a sample (Stats, Observation and a few
// runtime/metrics: O(schedulers), no scan), keeps it in the series ring
// and sends it to every stream as event "sample". The report sink sends
// each crash or supervisor report as event "crash". A stream whose
// client reads too slowly loses events (its buffer is dropped into, never
// waited on): samples come again, and the crash log endpoint has every
// report. Lock order: observer.mu, then hub.mu; takeSample takes
// observer.mu, so it is never called under hub.mu.

const seriesLen = 300

// warmWindow is the window a page's first rates are measured over when
// no sample is recent: long enough for a rate, short enough for a page
// load.
const warmWindow = 250 * time.Millisecond

type event struct {
	name string
	data []byte
}

type hub struct {
	o *observer

	mu      sync.Mutex // guards the fields below
	subs    map[chan event]struct{}
	ring    []*sample
	last    *sample
	running bool
	stop    chan struct{}
}

// clients is the number of open streams.
func (h *hub) clients() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// publish sends an event to every stream, dropping it for a full one.
func (h *hub) publish(name string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- event{name, data}:
		default:
		}
	}
}

// record keeps s as the latest sample and in the series.
func (h *hub) record(s *sample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = s
	if len(h.ring) >= seriesLen {
		copy(h.ring, h.ring[1:])
		h.ring = h.ring[:len(h.ring)-1]
	}
	h.ring = append(h.ring, s)
}

// current returns a sample no older than half the interval: the
// sampler's, or one taken now (and recorded, if no sampler runs).
func (h *hub) current() *sample {
	h.mu.Lock()
	last, running := h.last, h.running
	h.mu.Unlock()
	if last != nil && time.Since(last.at) < h.o.cfg.interval/2 {
		return last
	}
	s := h.o.takeSample(last)
	if !running {
		h.record(s)
	}
	return s
}

// warm returns the series for a page's first render, its last sample
// with rates: if no sample is younger than two intervals (no stream is
// open), it measures one over warmWindow (the wait a cold page load pays)
// and records it if no sampler runs.
func (h *hub) warm() []*sample {
	h.mu.Lock()
	last := h.last
	h.mu.Unlock()
	if last == nil || time.Since(last.at) > 2*h.o.cfg.interval {
		base := h.o.takeSample(nil)
		time.Sleep(warmWindow)
		s := h.o.takeSample(base)
		h.mu.Lock()
		running := h.running
		h.mu.Unlock()
		if running {
			return append(h.series(), s) // the sampler records its own
		}
		h.record(s)
	}
	return h.series()
}

func (h *hub) series() []*sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*sample, len(h.ring))
	copy(out, h.ring)
	return out
}

func (h *hub) subscribe() chan event {
	ch := make(chan event, 64)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[chan event]struct{}{}
	}
	h.subs[ch] = struct{}{}
	if !h.running {
		h.running = true
		h.stop = make(chan struct{})
		go h.sampler(h.stop)
	}
	return ch
}

func (h *hub) unsubscribe(ch chan event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, ch)
	if len(h.subs) == 0 && h.running {
		h.running = false
		close(h.stop)
	}
}

// sampler samples every interval until stop is closed.
func (h *hub) sampler(stop chan struct{}) {
	t := time.NewTicker(h.o.cfg.interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		h.mu.Lock()
		last := h.last
		h.mu.Unlock()
		s := h.o.takeSample(last)
		h.o.mu.Lock()
		h.o.lastUse = time.Now() // an open stream keeps the sampling on
		h.o.mu.Unlock()
		h.record(s)
		h.publish("sample", s)
	}
}

// serveEvents streams events until the client goes away.
func (o *observer) serveEvents(w http.ResponseWriter, r *http.Request) {
	if err := allowParams(r); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		httpError(w, http.StatusInternalServerError, "the response writer cannot stream")
		return
	}
	ch := o.hub.subscribe()
	defer o.hub.unsubscribe(ch)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	first, _ := json.Marshal(o.hub.current())
	if !writeEvent(w, event{"sample", first}) {
		return
	}
	fl.Flush()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case ev := <-ch:
			if !writeEvent(w, ev) {
				return
			}
		case <-keep.C:
			if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil {
				return
			}
		}
		fl.Flush()
	}
}

func writeEvent(w http.ResponseWriter, ev event) bool {
	_, err := w.Write([]byte("event: " + ev.name + "\ndata: " + string(ev.data) + "\n\n"))
	return err == nil
}
