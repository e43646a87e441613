package registry_test

import (
	"errors"
	"fmt"

	"github.com/colonyrt/colony/registry"
)

// A pid type of the caller's choosing; the actor package uses its Pid.
type pid uint64

func ExampleRegistry() {
	r := registry.New[pid]()
	_ = r.Register("logger", 7)

	p, ok := r.Whereis("logger")
	fmt.Println(p, ok)

	err := r.Register("logger", 8) // one name, one pid
	fmt.Println(errors.Is(err, registry.ErrNameTaken))

	err = r.Register("audit", 7) // one pid, one name
	fmt.Println(errors.Is(err, registry.ErrAlreadyNamed))

	r.Remove(7) // pid 7 died: its name vanishes
	_, ok = r.Whereis("logger")
	fmt.Println(ok, r.Len())
	// Output:
	// 7 true
	// true
	// true
	// false 0
}

func ExampleRegistry_Unregister() {
	r := registry.New[pid]()
	_ = r.Register("db", 3)
	fmt.Println(r.Unregister("db"))
	fmt.Println(errors.Is(r.Unregister("db"), registry.ErrNotRegistered))
	// Output:
	// <nil>
	// true
}

func ExampleGroups() {
	var g registry.Groups[pid] // the zero value is ready
	g.Join("workers", 1)
	g.Join("workers", 2)
	g.Join("workers", 1) // pg counts every join
	fmt.Println(g.Members("workers"))

	_ = g.Leave("workers", 1) // removes one entry: the most recent
	fmt.Println(g.Members("workers"))

	g.Join("cache", 2)
	fmt.Println(g.Which())

	g.RemoveAll(2) // pid 2 died: it leaves every group
	fmt.Println(g.Members("workers"), g.Which())

	fmt.Println(errors.Is(g.Leave("cache", 2), registry.ErrNotJoined))
	// Output:
	// [1 2 1]
	// [1 2]
	// [cache workers]
	// [1] [workers]
	// true
}

func ExampleGroups_Monitor() {
	var g registry.Groups[pid]
	g.Notify = func(c registry.Change[pid]) { // called under the Groups lock: only queue
		fmt.Println("monitor", c.Ref, "change", c.Seq, c.Group, c.Joined, c.Pids)
	}
	g.Join("workers", 1)
	fmt.Println(g.Monitor("workers", 7, 100)) // ref 7, owned by pid 100

	g.Join("workers", 2)
	g.Join("workers", 2)
	g.RemoveAll(2) // one leave per join
	told, ok := g.Demonitor(7, 100)
	fmt.Println(told, ok)
	g.Join("workers", 3) // no one is told
	// Output:
	// [1]
	// monitor 7 change 1 workers true [2]
	// monitor 7 change 2 workers true [2]
	// monitor 7 change 3 workers false [2]
	// monitor 7 change 4 workers false [2]
	// 4 true
}
