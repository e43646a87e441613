package main

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Upstream is the external service the pool talks to: a plain Go TCP server
// (no Colony in it) with a line protocol, one reply line per request line.
// A request is "VERB ID [ARG]"; the reply is "OK ID":
//
//	ECHO id      replies at once
//	SLOW id ms   replies after ms milliseconds
//	HOLD id      replies once Release is called
//	DROP id      closes the connection without a reply
//	JUNK id      replies, then sends a line nobody asked for
//
// It misbehaves on command: Stop closes the listener and every connection
// (new dials are refused), Restart listens again, on the same port or a new
// one. The demo and the test drive it.
type Upstream struct {
	mu    sync.Mutex
	ln    net.Listener
	addr  string
	conns map[net.Conn]bool
	quit  chan struct{} // closed by Stop: wakes SLOW and HOLD
	gate  chan struct{} // closed by Release: wakes HOLD
	seen  map[string]int
	wg    sync.WaitGroup
}

// StartUpstream listens on addr ("127.0.0.1:0" for any port).
func StartUpstream(addr string) (*Upstream, error) {
	u := &Upstream{seen: map[string]int{}, gate: make(chan struct{})}
	return u, u.Restart(addr)
}

// Restart listens again after Stop: on addr, or on the last address if addr
// is "" (the same port).
func (u *Upstream) Restart(addr string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.ln != nil {
		return fmt.Errorf("upstream: already listening on %s", u.addr)
	}
	if addr == "" {
		addr = u.addr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	u.ln, u.addr = ln, ln.Addr().String()
	u.conns, u.quit = map[net.Conn]bool{}, make(chan struct{})
	u.wg.Add(1)
	go u.accept(ln, u.quit)
	return nil
}

// Addr is the address it listens on (or last listened on).
func (u *Upstream) Addr() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.addr
}

// Stop closes the listener and every connection, wakes the requests held
// or slowed, and waits for its goroutines. Dials are refused until Restart.
func (u *Upstream) Stop() {
	u.mu.Lock()
	if u.ln != nil {
		u.ln.Close()
		for c := range u.conns {
			c.Close()
		}
		close(u.quit)
		u.ln = nil
	}
	u.mu.Unlock()
	u.wg.Wait()
}

// Release answers every HOLD request received so far.
func (u *Upstream) Release() {
	u.mu.Lock()
	close(u.gate)
	u.gate = make(chan struct{})
	u.mu.Unlock()
}

// Seen says how many times a request with this id arrived.
func (u *Upstream) Seen(id string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.seen[id]
}

func (u *Upstream) accept(ln net.Listener, quit chan struct{}) {
	defer u.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		u.mu.Lock()
		if u.ln != ln { // stopped meanwhile
			u.mu.Unlock()
			c.Close()
			return
		}
		u.conns[c] = true
		u.wg.Add(1)
		u.mu.Unlock()
		go u.serve(c, quit)
	}
}

func (u *Upstream) serve(c net.Conn, quit chan struct{}) {
	defer u.wg.Done()
	defer func() {
		u.mu.Lock()
		delete(u.conns, c)
		u.mu.Unlock()
		c.Close()
	}()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			fmt.Fprintf(c, "ERR bad request\n")
			continue
		}
		u.mu.Lock()
		u.seen[f[1]]++
		gate := u.gate
		u.mu.Unlock()
		reply := "OK " + f[1] + "\n"
		switch f[0] {
		case "SLOW":
			ms, _ := strconv.Atoi(f[len(f)-1])
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
			case <-quit:
				return
			}
		case "HOLD":
			select {
			case <-gate:
			case <-quit:
				return
			}
		case "DROP":
			return
		case "JUNK":
			reply += "UNASKED\n"
		}
		if _, err := c.Write([]byte(reply)); err != nil {
			return
		}
	}
}
