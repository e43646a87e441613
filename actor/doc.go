// Package actor is Colony's engine and public API: a System of actors in
// the Erlang/OTP style, scheduled by Colony's own M:N scheduler.
//
// An actor is a value with a Receive method, spawned into a System:
//
//	type counter struct{ n int }
//
//	func (s *counter) Receive(c *actor.Context, msg any) {
//		switch m := msg.(type) {
//		case int:
//			s.n += m
//		case actor.Request: // a Call: reply now, or keep m and reply later
//			c.Reply(m, s.n)
//		}
//	}
//
//	sys, _ := actor.Start(actor.Config{})
//	defer sys.Shutdown(context.Background())
//	pid, _ := sys.Spawn(&counter{})
//	sys.Send(pid, 2)
//	sys.Send(pid, 3)
//	n, err := actor.Call[int](sys, pid, "get", time.Second) // 5, nil: in order
//
// (Example in example_test.go is this program, checked by the tests.)
//
// Guarantees (docs/guarantees.md has the full list):
//   - An actor handles one message at a time; its state needs no locks.
//   - Messages from one sender to one receiver arrive in send order. A
//     Send happens before the Receive that handles the message.
//   - An idle actor owns no goroutine; it costs a slot and its record
//     (docs/benchmarks.md: bytes per idle actor).
//   - A handler may block (Call, Receive, Sleep): its scheduler role is
//     handed to a spare goroutine, so other actors keep running.
//   - A panic in a handler ends that actor with reason Panic (with the
//     stack); the System keeps running.
//   - Links, monitors, exit trapping and the registry follow OTP's rules
//     (docs/guarantees.md; checked against a real Erlang node in tests/).
//   - Stale pids are inert: a pid never reaches a later actor in the
//     same slot.
//
// Errors are sentinel values (ErrNoProc, ErrTimeout, ...) for errors.Is; a
// misuse of the API (a Context used outside its handler) panics.
package actor
