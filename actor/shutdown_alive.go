package actor

// Shutdown's error when its ctx ends with actors alive.
//
// A bare context.DeadlineExceeded said that Shutdown gave up, not on whom:
// the usual cause is an actor that traps exits and ignores the Shutdown
// signal, or whose handler never returns, and finding it meant guessing.
// So before step 3 kills them, Shutdown describes the actors still alive
// and wraps ctx's error with that (errors.Is still finds it). The root it
// was waiting for comes first; at most aliveNamed are described, each in
// at most aliveEntryMax bytes, and the rest are counted.
//
// Each description is read from outside the actor, while it may be
// running or dying, so only what is shared is read: the slot word's state
// (atomic), the trap flag (atomic), the registry's name (locked), and the
// behaviour, which is the owner's field (proc.beh, nil'd when its slot is
// reclaimed). The behaviour is read under the actor's cold-state lock with
// the cold state not yet dead: the finaliser takes that lock to mark it
// dead before it publishes the actor finalised, and the owner nils beh only
// after it has seen that, so our read happens before the write (or we see
// dead and leave beh alone). See coldNode and deadCold in exit.go.
//
// Where a blocked handler is: Shutdown observes stacks (ObserveStacks)
// while it runs, so a handler that blocked in a wait after Shutdown began
// (in a Receive, a Call, a Sleep: the usual way a trapping actor that got
// the signal goes on to hang) is labelled with its pid, and one read of the
// goroutine profile gives its stack; the description names the runtime's
// call it is blocked in and the caller's frame. A wait that began earlier
// is unlabelled, and the slot word's state says what kind of wait it is.

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime/pprof"
	"strings"
	"unicode/utf8"

	"github.com/colonyrt/colony/slot"
)

const (
	aliveNamed    = 5   // actors described in Shutdown's error; the rest are counted
	aliveEntryMax = 240 // bytes of one actor's description at most
)

// aliveError wraps err, ctx's error, with the actors still alive, waited
// (the root Shutdown waited for, if any) first; err itself if none is.
func (sys *System) aliveError(err error, waited Pid) error {
	var named []*proc
	total := 0
	if p := sys.procOf(waited); waited != (Pid{}) && p != nil && p.exit.Load() == alive {
		named = append(named, p)
	}
	sys.eachLive(func(p *proc) {
		total++
		if len(named) < aliveNamed && p.pid != waited {
			named = append(named, p)
		}
	})
	if len(named) == 0 {
		return err
	}
	total = max(total, len(named))
	var stacks map[string][]stackFrame
	if sys.obs.stacks.Load() {
		stacks = blockedStacks()
	}
	var b strings.Builder
	for i, p := range named {
		if i > 0 {
			b.WriteString("; ")
		}
		if p.pid == waited {
			b.WriteString("waited for ")
		}
		b.WriteString(sys.describeAlive(p, stacks))
	}
	if more := total - len(named); more > 0 {
		fmt.Fprintf(&b, "; and %d more", more)
	}
	actors := "actors"
	if total == 1 {
		actors = "actor"
	}
	return fmt.Errorf("actor: Shutdown: %w with %d %s still alive: %s", err, total, actors, b.String())
}

// describeAlive is one actor for aliveError: pid, registered name,
// behaviour type, and what its handler is doing, clipped to aliveEntryMax.
func (sys *System) describeAlive(p *proc, stacks map[string][]stackFrame) string {
	var b strings.Builder
	b.WriteString(p.pid.String())
	if name, ok := sys.nm.reg.NameOf(p.pid); ok {
		fmt.Fprintf(&b, " %q", clip(name, 64))
	}
	if t := sys.behaviourName(p); t != "" {
		b.WriteString(" " + clip(t, 96))
	}
	b.WriteString(" (")
	if p.flags.has(flagTrap) {
		b.WriteString("traps exits; ")
	}
	if fs, ok := stacks[pidLabel(p.pid)]; ok {
		b.WriteString(blockedWhere(fs))
	} else {
		g, _, s := p.slot.Word.Snapshot()
		if g != p.pid.gen {
			s = slot.Done
		}
		b.WriteString(stateWhere(s))
	}
	b.WriteString(")")
	return clip(b.String(), aliveEntryMax)
}

// behaviourName is behaviourType of p's behaviour, or "" if p is dying (see
// the note at the top of this file for why the lock makes the read safe).
func (sys *System) behaviourName(p *proc) string {
	cs := p.coldNode()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.dead || p.beh == nil {
		return ""
	}
	return behaviourType(p.beh)
}

// stateWhere says what a handler in slot state s is doing.
func stateWhere(s slot.State) string {
	switch s {
	case slot.Parked:
		return "idle, or in a selective Receive"
	case slot.Blocked:
		return "blocked in a Call, a Sleep, an Await or Blocking"
	case slot.Running, slot.Notified:
		return "its handler is running: spinning, or blocked outside the runtime"
	case slot.Queued:
		return "queued to run"
	default:
		return "exiting"
	}
}

// stackFrame is one frame of a goroutine profile: the function, without its
// package path, and file:line.
type stackFrame struct{ fn, at string }

// actorFuncPrefix is how this package's functions start in a stack.
var actorFuncPrefix = reflect.TypeFor[Pid]().PkgPath() + "."

// blockedWhere names the runtime call a labelled handler is blocked in and
// the frame that called it: the innermost frame outside the runtime and
// this package, and the frame of this package just inside it.
func blockedWhere(fs []stackFrame) string {
	for i, f := range fs {
		if strings.HasPrefix(f.fn, "runtime.") || strings.HasPrefix(f.fn, actorFuncPrefix) {
			continue
		}
		caller := shortFunc(f.fn) + " (" + filepath.Base(f.at) + ")"
		if i > 0 && strings.HasPrefix(fs[i-1].fn, actorFuncPrefix) {
			return "blocked in " + shortFunc(fs[i-1].fn) + ", called from " + caller
		}
		return "blocked in " + caller
	}
	return "blocked in the runtime"
}

// shortFunc drops fn's package path ("actor.(*Context).Call").
func shortFunc(fn string) string {
	if i := strings.LastIndexByte(fn, '/'); i >= 0 {
		return fn[i+1:]
	}
	return fn
}

// blockedStacks reads the goroutine profile once and returns the stacks of
// the goroutines labelled by labelBlocked, by their pid label.
func blockedStacks() map[string][]stackFrame {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return nil
	}
	key := fmt.Sprintf("%q:\"", blockedLabel)
	stacks := make(map[string][]stackFrame)
	sc := bufio.NewScanner(&buf)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	label := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			label = ""
		case strings.HasPrefix(line, "# labels:"):
			if _, v, ok := strings.Cut(line, key); ok {
				label, _, _ = strings.Cut(v, "\"")
			}
		case label != "" && strings.HasPrefix(line, "#\t"):
			// "#	pc	func+off	file:line"
			if f := strings.Fields(line[1:]); len(f) == 3 {
				fn, _, _ := strings.Cut(f[1], "+")
				stacks[label] = append(stacks[label], stackFrame{fn, f[2]})
			}
		}
	}
	return stacks
}

// clip cuts s to at most n bytes, marking the cut with "...".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - 3
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}
