package observer

import (
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/supervisor"
)

// The supervision trees.
//
// A supervisor is an actor like any other: nothing in the runtime marks
// one. The observer knows the roots it was given (Supervisors) and every
// supervisor that has written a report; it asks each for its children
// (supervisor.WhichChildren, a call answered between two messages, waited
// on for at most cfg.callWait: a supervisor busy stopping a child shows
// as not answering) and walks down into the children of type Supervisor.
// A known supervisor met inside another's tree is not shown again as a
// root. Restart counts and last exits come from the reports
// (child_terminated), so they count since the observer was made.

const (
	maxTreeNodes = 2000
	maxChildren  = 200
	maxDepth     = 32
)

// treeNode is a supervisor or a worker in a tree.
type treeNode struct {
	Pid        string      `json:"pid,omitempty"`
	ID         string      `json:"id,omitempty"`
	Name       string      `json:"name,omitempty"`
	Kind       string      `json:"kind"` // supervisor or worker
	Alive      bool        `json:"alive"`
	Restarting bool        `json:"restarting,omitempty"`
	Restarts   uint64      `json:"restarts,omitempty"`
	ChildExits uint64      `json:"child_exits,omitempty"`
	GaveUp     bool        `json:"gave_up,omitempty"`
	LastExit   *exitNote   `json:"last_exit,omitempty"`
	Children   []*treeNode `json:"children,omitempty"`
	More       int         `json:"more_children,omitempty"` // children left out past maxChildren
	Error      string      `json:"error,omitempty"`
}

// timeoutCaller makes the supervisor API's calls from outside with a
// bounded wait (WhichChildren itself waits forever).
type timeoutCaller struct {
	sys *actor.System
	d   time.Duration
}

func (c timeoutCaller) Call(pid actor.Pid, req any, _ time.Duration) (any, error) {
	return c.sys.Call(pid, req, c.d)
}

func (c timeoutCaller) CallName(name string, req any, _ time.Duration) (any, error) {
	return c.sys.CallName(name, req, c.d)
}

// supInfo is a copy of a supervisor's record, taken under o.mu.
type supInfo struct {
	restarts, childExits uint64
	gaveUp               bool
	lastExit             map[string]exitNote
}

func (o *observer) supInfo(pid actor.Pid) supInfo {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.sups[pid]
	if s == nil {
		return supInfo{}
	}
	le := make(map[string]exitNote, len(s.lastExit))
	for k, v := range s.lastExit {
		le[k] = v
	}
	return supInfo{s.restarts, s.childExits, s.gaveUp, le}
}

func (o *observer) serveTree(w http.ResponseWriter, r *http.Request) {
	if err := allowParams(r); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	o.mu.Lock()
	known := slices.Clone(o.cfg.roots)
	for _, p := range o.supOrder {
		if !slices.Contains(known, p) {
			known = append(known, p)
		}
	}
	o.mu.Unlock()
	seen := map[actor.Pid]bool{}
	budget := maxTreeNodes
	var roots []*treeNode
	for _, p := range known {
		if seen[p] {
			continue
		}
		n := o.walk(p, "", seen, &budget, 0)
		if n.Alive || n.Restarts > 0 || n.ChildExits > 0 {
			roots = append(roots, n)
		}
	}
	// A root walked first may have turned up inside a later root's tree:
	// keep only the roots nobody else's tree holds.
	var top []*treeNode
	inner := map[string]bool{}
	var mark func(n *treeNode, depth int)
	mark = func(n *treeNode, depth int) {
		for _, c := range n.Children {
			inner[c.Pid] = true
			mark(c, depth+1)
		}
	}
	for _, n := range roots {
		mark(n, 0)
	}
	for _, n := range roots {
		if !inner[n.Pid] {
			top = append(top, n)
		}
	}
	writeJSON(w, map[string]any{"trees": nonNil(top), "truncated": budget <= 0})
}

// walk describes supervisor pid and, within budget, its subtree.
func (o *observer) walk(pid actor.Pid, id string, seen map[actor.Pid]bool, budget *int, depth int) *treeNode {
	seen[pid] = true
	*budget--
	si := o.supInfo(pid)
	n := &treeNode{Pid: pid.String(), ID: id, Kind: "supervisor", Restarts: si.restarts, ChildExits: si.childExits, GaveUp: si.gaveUp}
	info, err := o.sys.Info(pid)
	if err != nil {
		return n
	}
	n.Alive, n.Name = true, info.Name
	kids, err := supervisor.WhichChildren(timeoutCaller{o.sys, o.cfg.callWait}, pid)
	if err != nil {
		if errors.Is(err, actor.ErrTimeout) {
			n.Error = "no answer within " + o.cfg.callWait.String()
		} else {
			n.Error = err.Error()
		}
		return n
	}
	for i, k := range kids {
		if i >= maxChildren || *budget <= 0 || depth >= maxDepth {
			n.More = len(kids) - i
			break
		}
		var c *treeNode
		if k.Type == supervisor.Supervisor && !k.Pid.IsZero() && !seen[k.Pid] {
			c = o.walk(k.Pid, k.ID, seen, budget, depth+1)
		} else {
			*budget--
			c = &treeNode{ID: k.ID, Kind: "worker", Restarting: k.Restarting}
			if k.Type == supervisor.Supervisor {
				c.Kind = "supervisor"
			}
			if !k.Pid.IsZero() {
				c.Pid = k.Pid.String()
				if ci, err := o.sys.Info(k.Pid); err == nil {
					c.Alive, c.Name = true, ci.Name
				}
			}
		}
		if le, ok := si.lastExit[k.ID]; ok {
			c.LastExit = &le
		}
		n.Children = append(n.Children, c)
	}
	return n
}
