package main

import (
	"bytes"
	"fmt"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/backoff"
	netio "github.com/colonyrt/colony/io"
)

// Messages to a worker: from the manager, and a lease holder's call.
type (
	job struct {
		req  actor.Request // the caller's call, answered by the worker
		line string
	}
	grant   struct{ id uint64 }
	revoke  struct{ id uint64 }
	newAddr struct{ addr string }
	exec    struct {
		lease uint64
		line  string
	}
	// timers (in actor.Timeout)
	redial     struct{}
	replyTimer struct{}
)

// inflight is the request written to the upstream and not yet answered.
type inflight struct {
	req    actor.Request
	routed bool // from the manager (else a lease holder's Exec)
	timer  actor.TimerRef
}

// worker owns one upstream connection, in active-once mode, and serves one
// request at a time on it. A request that fails (connection lost, no reply in
// time, a reply nobody asked for) is answered with an error, never retried:
// the upstream may have acted on it. The connection is then dropped, since a
// reply still on its way would be read as the next request's, and dialled
// again after a backoff.
type worker struct {
	actor.ServerBase
	opt       Options
	manager   actor.Pid
	conn      *netio.Conn
	buf       []byte
	cur       *inflight
	lease     uint64           // the lease in force, 0 if none
	returning bool             // revoked while a request of the lease was in flight
	backoff   *backoff.Backoff // the redial delay: consecutive dial or connection failures
	dialT     actor.TimerRef
}

func (w *worker) Init(c *actor.Context) error {
	m, ok := c.System().Whereis(w.opt.Name)
	if !ok {
		return fmt.Errorf("connpool: no manager %q", w.opt.Name)
	}
	addr, err := actor.Call[string](c, m, hello{}, 5*time.Second)
	if err != nil {
		return err
	}
	w.manager, w.opt.Addr = m, addr
	// BackoffMin doubled per consecutive failure, up to BackoffMax, half of
	// it random, so that the workers of a pool do not all dial at once.
	if w.backoff, err = backoff.New(w.opt.BackoffMin, w.opt.BackoffMax, backoff.Jitter(0.5)); err != nil {
		return err
	}
	return actor.Continue(redial{}) // dial after the start: a dead upstream must not fail it
}

func (w *worker) HandleContinue(c *actor.Context, _ any) { w.dial(c) }

func (w *worker) dial(c *actor.Context) {
	conn, err := netio.Dial(c, w.opt.Addr, w.opt.DialTimeout)
	if err != nil {
		c.Send(w.manager, down{c.Self(), err, true})
		w.retry(c)
		return
	}
	w.conn, w.buf = conn, w.buf[:0]
	if err := conn.SetActive(netio.Once); err != nil {
		w.lost(c, err)
		return
	}
	c.Send(w.manager, up{c.Self()})
}

// retry arms the redial timer after the backoff's next delay.
func (w *worker) retry(c *actor.Context) {
	w.dialT, _ = c.StartTimer(c.Self(), redial{}, w.backoff.Next())
}

func (w *worker) HandleCall(c *actor.Context, req actor.Request) {
	m, ok := req.Msg.(exec)
	switch {
	case !ok:
		w.ServerBase.HandleCall(c, req)
	case m.lease == 0 || m.lease != w.lease:
		c.ReplyError(req, ErrNotLeased)
	case w.cur != nil:
		c.ReplyError(req, ErrLeaseBusy)
	case w.conn == nil:
		c.ReplyError(req, ErrNotConnected)
	default:
		w.send(c, req, m.line, false)
	}
}

func (w *worker) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case job:
		switch {
		case !c.Waiting(m.req): // its caller gave up: do not send it
			c.Send(w.manager, done{c.Self(), true, resGaveUp})
		case w.cur != nil || w.conn == nil || w.lease != 0:
			// The manager's view lagged ours (our down is on its way):
			// nothing was sent, so it may route the request again.
			c.Send(w.manager, done{c.Self(), true, resBounce})
		default:
			w.send(c, m.req, m.line, true)
		}
	case grant:
		w.lease, w.returning = m.id, false
	case revoke:
		if m.id == w.lease {
			w.lease = 0
			w.returning = true
			w.idle(c)
		}
	case newAddr:
		w.opt.Addr = m.addr
	case actor.Timeout:
		switch m.Msg.(type) {
		case redial:
			if m.Ref == w.dialT && w.conn == nil {
				w.dial(c)
			}
		case replyTimer:
			if w.cur != nil && m.Ref == w.cur.timer {
				w.lost(c, ErrUpstreamTimeout)
			}
		}
	case netio.Data:
		if m.Conn == w.conn {
			w.buf = append(w.buf, m.Bytes...)
			w.read(c)
		}
	case netio.Closed:
		if m.Conn == w.conn {
			w.lost(c, ErrConnLost)
		}
	case netio.Error:
		if m.Conn == w.conn {
			w.lost(c, fmt.Errorf("%w: %v", ErrConnLost, m.Err))
		}
	}
}

// send writes a request line and starts its reply timer.
func (w *worker) send(c *actor.Context, req actor.Request, line string, routed bool) {
	w.cur = &inflight{req: req, routed: routed}
	if err := w.conn.Send([]byte(line + "\n")); err != nil {
		w.lost(c, fmt.Errorf("%w: %v", ErrConnLost, err))
		return
	}
	w.cur.timer, _ = c.StartTimer(c.Self(), replyTimer{}, w.opt.RequestTimeout)
}

// read answers the request in flight once its reply line is in.
func (w *worker) read(c *actor.Context) {
	i := bytes.IndexByte(w.buf, '\n')
	switch {
	case i < 0 && len(w.buf) > w.opt.MaxLine, i >= 0 && w.cur == nil:
		w.lost(c, ErrProtocol)
		return
	case i < 0:
		if err := w.conn.SetActive(netio.Once); err != nil {
			w.lost(c, fmt.Errorf("%w: %v", ErrConnLost, err))
		}
		return
	}
	cur := w.cur
	w.cur = nil
	c.CancelTimer(cur.timer)
	c.Reply(cur.req, string(w.buf[:i])) // false if its caller gave up: dropped
	c.Send(w.manager, done{c.Self(), cur.routed, resOK})
	w.backoff.Success()
	if i+1 < len(w.buf) { // more than the reply: the stream is out of step
		w.lost(c, ErrProtocol)
		return
	}
	w.buf = w.buf[:0]
	if err := w.conn.SetActive(netio.Once); err != nil {
		w.lost(c, fmt.Errorf("%w: %v", ErrConnLost, err))
		return
	}
	w.idle(c)
}

// lost drops the connection, answers the request in flight with err, and
// arms the redial. The manager hears down before done, so it routes nothing
// more here until up.
func (w *worker) lost(c *actor.Context, err error) {
	if w.conn != nil {
		w.conn.SetLinger(0) // abortive: whatever it still holds is stale
		w.conn.Close()
		w.conn = nil
		c.Send(w.manager, down{c.Self(), err, false})
		w.retry(c)
	}
	if cur := w.cur; cur != nil {
		w.cur = nil
		c.CancelTimer(cur.timer)
		c.ReplyError(cur.req, err)
		c.Send(w.manager, done{c.Self(), cur.routed, resFailed})
	}
	w.idle(c)
}

// idle tells the manager a revoked lease is over once no request is in flight.
func (w *worker) idle(c *actor.Context) {
	if w.returning && w.cur == nil {
		w.returning = false
		c.Send(w.manager, returned{c.Self()})
	}
}
