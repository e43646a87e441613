// Package testlog collects what a System's Config.Logger is given, for the
// tests of the packages that write reports through it.
package testlog

import (
	"fmt"
	"strings"
	"sync"
)

// Sink collects formatted log entries; its Log is a Config.Logger. The zero
// Sink is ready; it is safe for concurrent use.
type Sink struct {
	mu    sync.Mutex
	lines []string
}

// Log formats and keeps one entry.
func (l *Sink) Log(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

// All returns a copy of every entry, in the order logged.
func (l *Sink) All() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// Matching returns the entries that contain sub.
func (l *Sink) Matching(sub string) []string {
	var r []string
	for _, s := range l.All() {
		if strings.Contains(s, sub) {
			r = append(r, s)
		}
	}
	return r
}
