package pool

import (
	"time"

	"github.com/colonyrt/colony/actor"
)

// Debug returns the pool's idle workers and each busy worker's holder.
func Debug(c actor.Caller, p *Pool) (idle []actor.Pid, busy map[actor.Pid]actor.Pid, err error) {
	d, err := call[debugState](&p.handle, c, debugReq{}, 5*time.Second)
	return d.Idle, d.Busy, err
}
