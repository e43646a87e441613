package acceptor

import (
	"time"

	"github.com/colonyrt/colony/actor"
)

// State asks l's listener actor for its demand (accepts asked of the
// socket), its ready acceptors and the connections it holds.
func State(sys *actor.System, l *Listener) (demand, ready, held int, err error) {
	p := l.lsock.Load()
	if p == nil {
		return 0, 0, 0, actor.ErrNoProc
	}
	st, err := actor.Call[lsockState](sys, *p, stateReq{}, 5*time.Second)
	return st.Demand, st.Ready, st.Held, err
}

// Parts returns the pids of l's listener actor, conns supervisor and
// acceptors supervisor (zero when not running).
func Parts(l *Listener) (lsock, conns, accs actor.Pid) {
	if p := l.lsock.Load(); p != nil {
		lsock = *p
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return lsock, l.conns, l.accs
}
