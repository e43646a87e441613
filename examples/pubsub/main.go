// Command pubsub is a small publish/subscribe broker built on Colony.
//
// A rest_for_one supervisor owns a simple_one_for_one supervisor of topic
// actors, then the broker, a gen_server registered by name. The broker starts
// one topic actor per topic on demand (StartChildArgs), monitors it, and
// forwards publishes and subscribes to it.
//
// Subscriptions live in process groups, one per topic: a subscriber is an
// actor that has joined the topic's group. The topic actor monitors its group
// (MonitorGroup) to know its subscribers, so a subscriber's death removes it
// with no clean-up code, and a restarted topic (or broker) finds every
// subscription where it left it: the registry owns them, not the actor that
// crashed.
//
// A publish may be retained for a while: a subscriber that joins later gets it
// first. The retained message expires with a StartTimer, cancelled and re-armed
// when a newer one replaces it. A topic ticks with SendInterval; one with no
// subscriber and nothing retained for two ticks asks the broker to retire it.
//
// When a topic actor crashes, its supervisor restarts it under the same name;
// the broker sees the Down, holds what is published or subscribed to that topic
// until the new actor announces itself (or a SendAfter deadline passes), then
// forwards it in order. Messages already in the dead actor's mailbox are lost:
// delivery is at most once across a topic crash, exactly once otherwise, in
// each publisher's order.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

const (
	supName     = "pubsub.sup"
	brokerName  = "pubsub.broker"
	topicsName  = "pubsub.topics"
	callTimeout = time.Second
	// restartWait bounds how long the broker holds a crashed topic's traffic.
	restartWait = time.Second
)

// topicReg is the name a topic's actor is registered under, so that at most
// one actor serves a topic even when the broker restarts and rebuilds its map.
func topicReg(topic string) string { return "pubsub.topic:" + topic }

// groupOf is the process group of topic's subscribers.
func groupOf(topic string) string { return "pubsub.subs:" + topic }

// Message is what a subscriber receives, as a plain message (HandleInfo for a
// Server subscriber).
type Message struct {
	Topic    string
	Payload  any
	Retained bool // replayed to a new subscriber, published before it joined
}

var (
	// ErrTopicDown: the topic's actor crashed and did not come back in time.
	ErrTopicDown = errors.New("pubsub: topic unavailable")
	// ErrNotSubscribed: Unsubscribe of a pid that is not subscribed.
	ErrNotSubscribed = errors.New("pubsub: not subscribed")
)

// The broker's protocol.
type (
	publish struct {
		topic   string
		payload any
		retain  time.Duration
	}
	subscribe struct {
		topic string
		pid   actor.Pid
	}
	unsubscribe subscribe
	lookup      string   // call: the topic's pid now (zero while restarting)
	brokerInfoQ struct{} // call: BrokerInfo
	topicUp     struct { // cast by a topic's Init
		topic string
		pid   actor.Pid
	}
	idle struct { // cast by a topic with nothing to do
		topic string
		pid   actor.Pid
	}
	restartDeadline string // the broker's SendAfter to itself
)

// The topic's protocol.
type (
	deliver struct { // the broker's forward of a publish
		payload any
		retain  time.Duration
	}
	join      actor.Pid
	nameQ     struct{}
	retireQ   struct{}
	topicInfo struct{}
	tick      struct{}
	expire    struct{} // carried by the retained message's StartTimer
)

// Publish publishes payload on topic (a cast to the broker: it does not wait).
// With retain > 0 the message is also kept for retain, and given first to
// whoever subscribes meanwhile; it replaces the message retained before.
func Publish(s actor.Sender, topic string, payload any, retain time.Duration) error {
	return actor.CastName(s, brokerName, publish{topic, payload, max(retain, 0)})
}

// Subscribe subscribes the actor sub to topic, starting the topic if needed.
// It returns once sub is subscribed and has been sent the retained message,
// if any. Subscribing twice is subscribing once.
func Subscribe(c actor.Caller, sub actor.Pid, topic string) error {
	_, err := actor.CallName[struct{}](c, brokerName, subscribe{topic, sub}, callTimeout)
	return err
}

// Unsubscribe ends sub's subscription to topic.
func Unsubscribe(c actor.Caller, sub actor.Pid, topic string) error {
	_, err := actor.CallName[struct{}](c, brokerName, unsubscribe{topic, sub}, callTimeout)
	return err
}

// BrokerInfo is the broker's view.
type BrokerInfo struct {
	Topics  int // topics served, restarting ones included
	Waiting int // publishes and subscribes held for restarting topics
}

// TopicInfo is a topic actor's view.
type TopicInfo struct {
	Subscribers int
	Published   uint64
	Retained    bool
	// RetainedAt and ExpiredAt: when the last retained message was published,
	// and when it expired (zero if it has not).
	RetainedAt, ExpiredAt time.Time
}

// topicEntry is the broker's record of one topic.
type topicEntry struct {
	pid     actor.Pid // zero while its actor restarts
	mon     actor.Ref
	held    []any // publish and actor.Request (subscribe), in arrival order
	waitFor actor.TimerRef
}

type broker struct {
	actor.ServerBase
	topics map[string]*topicEntry
	byPid  map[actor.Pid]string
}

func newBroker(...any) actor.Server {
	return &broker{topics: map[string]*topicEntry{}, byPid: map[actor.Pid]string{}}
}

// Init adopts the topics already running: after a crash of the broker alone,
// its sibling supervisor still has them.
func (b *broker) Init(c *actor.Context) error {
	sup, ok := c.System().Whereis(topicsName)
	if !ok {
		return fmt.Errorf("pubsub: no %s", topicsName)
	}
	kids, err := supervisor.WhichChildren(c, sup)
	if err != nil {
		return err
	}
	for _, k := range kids {
		if k.Pid.IsZero() {
			continue
		}
		// A topic restarting now is missed here; its Init casts topicUp.
		if name, err := actor.Call[string](c, k.Pid, nameQ{}, callTimeout); err == nil {
			b.adopt(c, name, k.Pid)
		}
	}
	return nil
}

// adopt records pid as topic's actor, monitors it and forwards what was held.
func (b *broker) adopt(c *actor.Context, topic string, pid actor.Pid) *topicEntry {
	e := b.topics[topic]
	if e == nil {
		e = &topicEntry{}
		b.topics[topic] = e
	}
	if e.pid == pid {
		return e
	}
	if !e.pid.IsZero() { // an actor we missed the Down of: forget it
		c.Demonitor(e.mon, true)
		delete(b.byPid, e.pid)
	}
	mon, err := c.Monitor(pid)
	if err != nil {
		c.Stop(err)
		return e
	}
	e.pid, e.mon = pid, mon
	b.byPid[pid] = topic
	c.CancelTimer(e.waitFor)
	held := e.held
	e.held = nil
	for _, m := range held {
		b.forward(c, e, m)
	}
	return e
}

// entry returns topic's entry, starting its actor if there is none.
func (b *broker) entry(c *actor.Context, topic string) (*topicEntry, error) {
	if e := b.topics[topic]; e != nil {
		return e, nil
	}
	sup, ok := c.System().Whereis(topicsName)
	if !ok {
		return nil, ErrTopicDown
	}
	pid, err := supervisor.StartChildArgs(c, sup, topic)
	if errors.Is(err, actor.ErrNameTaken) { // it runs; we lost track of it
		var ok bool
		if pid, ok = c.System().Whereis(topicReg(topic)); !ok {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	return b.adopt(c, topic, pid), nil
}

// forward hands a publish or a subscribe Request to e's actor, or holds it
// while the actor restarts.
func (b *broker) forward(c *actor.Context, e *topicEntry, m any) {
	if e.pid.IsZero() {
		e.held = append(e.held, m)
		return
	}
	switch m := m.(type) {
	case publish:
		c.Send(e.pid, deliver{m.payload, m.retain})
	case actor.Request:
		sub := m.Msg.(subscribe)
		if _, err := actor.Call[struct{}](c, e.pid, join(sub.pid), callTimeout); err != nil {
			c.ReplyError(m, err)
			return
		}
		c.Reply(m, struct{}{})
	}
}

func (b *broker) HandleCall(c *actor.Context, req actor.Request) {
	switch m := req.Msg.(type) {
	case subscribe:
		e, err := b.entry(c, m.topic)
		if err != nil {
			c.ReplyError(req, err)
			return
		}
		b.forward(c, e, req) // answered now, or once the topic is back
	case unsubscribe:
		// The subscription is a group membership: no topic actor needed.
		if err := c.System().LeaveGroup(groupOf(m.topic), m.pid); err != nil {
			c.ReplyError(req, ErrNotSubscribed)
			return
		}
		c.Reply(req, struct{}{})
	case lookup:
		var pid actor.Pid
		if e := b.topics[string(m)]; e != nil {
			pid = e.pid
		}
		c.Reply(req, pid)
	case brokerInfoQ:
		in := BrokerInfo{Topics: len(b.topics)}
		for _, e := range b.topics {
			in.Waiting += len(e.held)
		}
		c.Reply(req, in)
	default:
		b.ServerBase.HandleCall(c, req)
	}
}

func (b *broker) HandleCast(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case publish:
		e, err := b.entry(c, m.topic)
		if err != nil {
			c.System().Log("pubsub: publish to %q dropped: %v", m.topic, err)
			return
		}
		b.forward(c, e, m)
	case topicUp:
		if c.System().Alive(m.pid) {
			b.adopt(c, m.topic, m.pid)
		}
	case idle:
		// Ask the topic itself: something may have reached it since it
		// cast this. The broker forwards nothing while it waits, so an idle
		// topic stays idle until it has stopped.
		e := b.topics[m.topic]
		if e == nil || e.pid != m.pid {
			return
		}
		if ok, err := actor.Call[bool](c, e.pid, retireQ{}, callTimeout); err == nil && ok {
			c.Demonitor(e.mon, true)
			delete(b.byPid, e.pid)
			delete(b.topics, m.topic)
		}
	}
}

func (b *broker) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case actor.Down: // a topic crashed: its supervisor restarts it
		topic, ok := b.byPid[m.Pid]
		if !ok || b.topics[topic].mon != m.Ref {
			return // not a monitor of ours (as OTP code matches the ref)
		}
		delete(b.byPid, m.Pid)
		e := b.topics[topic]
		e.pid, e.mon = actor.Pid{}, 0
		e.waitFor, _ = c.SendAfter(c.Self(), restartDeadline(topic), restartWait)
	case restartDeadline:
		e := b.topics[string(m)]
		if e == nil || !e.pid.IsZero() {
			return // back already (a timer cancelled too late)
		}
		for _, h := range e.held {
			if req, ok := h.(actor.Request); ok {
				c.ReplyError(req, ErrTopicDown)
			}
		}
		c.System().Log("pubsub: topic %q did not come back; %d held messages dropped", string(m), len(e.held))
		delete(b.topics, string(m))
	}
}

// topic serves one topic: it delivers each publish to the members of the
// topic's group, keeps the retained message, and reports when idle.
type topic struct {
	actor.ServerBase
	name, group string
	subs        map[actor.Pid]int // member -> joins, from the group monitor
	published   uint64
	retained    *Message
	retainT     actor.TimerRef
	info        TopicInfo
	quiet       int  // ticks with no subscriber, nothing retained, no publish
	busy        bool // a publish since the last tick
	idleSent    bool
	tickEvery   time.Duration
}

func (t *topic) Init(c *actor.Context) error {
	t.group = groupOf(t.name)
	_, members, err := c.MonitorGroup(t.group)
	if err != nil {
		return err
	}
	t.subs = map[actor.Pid]int{}
	for _, p := range members {
		t.subs[p]++
	}
	if _, err := c.SendInterval(c.Self(), tick{}, t.tickEvery); err != nil {
		return err
	}
	// Tell the broker (a broker restarting now finds us by WhichChildren).
	actor.CastName(c, brokerName, topicUp{t.name, c.Self()})
	return nil
}

func (t *topic) HandleCall(c *actor.Context, req actor.Request) {
	switch m := req.Msg.(type) {
	case join:
		pid := actor.Pid(m)
		if t.subs[pid] == 0 {
			// The GroupChange is queued to us before JoinGroup returns, so
			// it is handled before any later subscribe of the same pid.
			if err := c.System().JoinGroup(t.group, pid); err != nil {
				c.ReplyError(req, err)
				return
			}
			if t.retained != nil {
				c.Send(pid, *t.retained)
			}
		}
		t.quiet, t.idleSent = 0, false
		c.Reply(req, struct{}{})
	case nameQ:
		c.Reply(req, t.name)
	case retireQ:
		ok := len(t.subs) == 0 && t.retained == nil
		c.Reply(req, ok)
		if ok {
			c.Stop(actor.Normal) // transient: not restarted
		} else {
			t.quiet, t.idleSent = 0, false
		}
	case topicInfo:
		in := t.info
		in.Subscribers, in.Published, in.Retained = len(t.subs), t.published, t.retained != nil
		c.Reply(req, in)
	default:
		t.ServerBase.HandleCall(c, req)
	}
}

func (t *topic) HandleInfo(c *actor.Context, msg any) {
	switch m := msg.(type) {
	case deliver:
		t.published++
		t.busy = true
		out := Message{Topic: t.name, Payload: m.payload}
		for p := range t.subs {
			c.Send(p, out) // a full bounded mailbox loses this one message
		}
		if m.retain > 0 {
			c.CancelTimer(t.retainT)
			out.Retained = true
			t.retained = &out
			t.retainT, _ = c.StartTimer(c.Self(), expire{}, m.retain)
			t.info.RetainedAt, t.info.ExpiredAt = time.Now(), time.Time{}
		}
	case actor.Timeout:
		// A timer cancelled after it fired still delivers: only the last
		// one armed expires the retained message.
		if m.Ref == t.retainT {
			t.retained = nil
			t.info.ExpiredAt = time.Now()
		}
	case actor.GroupChange:
		for _, p := range m.Pids {
			if m.Joined {
				t.subs[p]++
			} else if t.subs[p]--; t.subs[p] <= 0 {
				delete(t.subs, p)
			}
		}
	case tick:
		if len(t.subs) > 0 || t.retained != nil || t.busy {
			t.quiet, t.busy, t.idleSent = 0, false, false
			return
		}
		if t.quiet++; t.quiet >= 2 && !t.idleSent {
			t.idleSent = actor.CastName(c, brokerName, idle{t.name, c.Self()}) == nil
		}
	}
}

// topicStarter is the simple_one_for_one template's start: each topic's actor
// is registered under its own name, so it cannot use ServerStart, whose
// options are the same for every child.
func topicStarter(tickEvery time.Duration) supervisor.StartFunc {
	return func(c *actor.Context, args ...any) (actor.Pid, error) {
		name := args[0].(string)
		return actor.SpawnServer(c, &topic{name: name, tickEvery: tickEvery},
			actor.WithSpawn(actor.Name(topicReg(name))))
	}
}

// Options tune a broker for tests.
type Options struct {
	Tick   time.Duration // a topic's idle tick; default 1 s
	Logger func(format string, args ...any)
}

// start starts a System and the broker's tree.
func start(o Options) (*actor.System, error) {
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	sys, err := actor.Start(actor.Config{Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	_, err = supervisor.Start(sys, supervisor.Spec{
		Name:     supName,
		Strategy: supervisor.RestForOne, // new topics: a new broker
		Children: []supervisor.ChildSpec{
			supervisor.Child("topics", supervisor.Spec{
				Name:      topicsName,
				Strategy:  supervisor.SimpleOneForOne,
				Intensity: 20, Period: time.Second,
				Children: []supervisor.ChildSpec{{
					ID: "topic", Start: topicStarter(o.Tick), Restart: supervisor.Transient,
					Shutdown: time.Second,
				}},
			}),
			{ID: "broker", Start: supervisor.ServerStart(newBroker,
				actor.WithSpawn(actor.Name(brokerName)))},
		},
	})
	if err != nil {
		sys.Shutdown(context.Background())
		return nil, err
	}
	return sys, nil
}

// printer is a subscriber that writes a line for each message it gets.
func printer(name string, lines chan<- string) actor.ActorFunc {
	return func(c *actor.Context, msg any) {
		if m, ok := msg.(Message); ok {
			r := ""
			if m.Retained {
				r = " (retained)"
			}
			lines <- fmt.Sprintf("%s got %v on %s%s", name, m.Payload, m.Topic, r)
		}
	}
}

// demo runs the broker through a few publishes, a retained message, a topic
// crash and a subscriber's death, and writes what the subscribers saw.
func demo(w io.Writer) error {
	sys, err := start(Options{Tick: 50 * time.Millisecond, Logger: func(string, ...any) {}})
	if err != nil {
		return err
	}
	defer sys.Shutdown(context.Background())
	lines := make(chan string, 64)
	expect := func(n int) error {
		for range n {
			select {
			case l := <-lines:
				fmt.Fprintln(w, l)
			case <-time.After(2 * time.Second):
				return errors.New("pubsub demo: a message did not arrive")
			}
		}
		return nil
	}
	alice, _ := sys.Spawn(printer("alice", lines))
	bob, _ := sys.Spawn(printer("bob", lines))
	for _, s := range []struct {
		pid   actor.Pid
		topic string
	}{{alice, "news"}, {alice, "weather"}, {bob, "news"}} {
		if err := Subscribe(sys, s.pid, s.topic); err != nil {
			return err
		}
	}
	Publish(sys, "news", "colony 1.0 released", 0)
	Publish(sys, "weather", "sunny", 200*time.Millisecond)
	if err := expect(3); err != nil {
		return err
	}

	carol, _ := sys.Spawn(printer("carol", lines))
	if err := Subscribe(sys, carol, "weather"); err != nil { // gets "sunny"
		return err
	}
	if err := expect(1); err != nil {
		return err
	}

	// Crash the news topic: the supervisor restarts it, the subscriptions
	// survive in the group, the broker forwards to the new actor.
	old, _ := sys.Whereis(topicReg("news"))
	wt, _ := sys.Monitor(old)
	sys.Exit(old, errors.New("boom"))
	<-wt.Done()
	for {
		pid, err := actor.CallName[actor.Pid](sys, brokerName, lookup("news"), callTimeout)
		if err != nil {
			return err
		}
		if !pid.IsZero() && pid != old {
			fmt.Fprintf(w, "news topic restarted: %v -> %v\n", old, pid)
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// bob dies: the group forgets him; only alice gets the next news.
	wb, _ := sys.Monitor(bob)
	sys.Exit(bob, actor.Kill)
	<-wb.Done()
	Publish(sys, "news", "bob left", 0)
	if err := expect(1); err != nil {
		return err
	}
	fmt.Fprintf(w, "news subscribers: %v\n", len(sys.GroupMembers(groupOf("news"))))
	return nil
}

func main() {
	if err := demo(os.Stdout); err != nil {
		log.Fatal(err)
	}
}
