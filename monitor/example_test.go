package monitor_test

import (
	"fmt"

	"github.com/colonyrt/colony/monitor"
)

type pid string

// A worker links to its supervisor and is monitored by a client; at the
// worker's death Close hands the runtime everything to notify, once.
func ExampleNode() {
	var refs monitor.Refs
	var worker monitor.Node[pid] // the zero Node is ready

	worker.AddLink("supervisor")
	ref := refs.Next()
	worker.AddMonitor(ref, "client")
	fmt.Println(worker.HasLink("supervisor"))

	links, monitors, _ := worker.Close() // the worker died
	fmt.Println(links, monitors)

	// Too late: monitoring a dead actor fails, and the caller sends
	// Down{noproc} at once; linking fails, and the caller reports noproc.
	fmt.Println(worker.AddMonitor(refs.Next(), "late"), worker.AddLink("late"))
	// Output:
	// true
	// [supervisor] [{1 client}]
	// false false
}

// The monitors an actor holds on others are kept on its own node, so that
// Demonitor can find the target by ref.
func ExampleNode_RemoveWatching() {
	var refs monitor.Refs
	var client, server monitor.Node[pid]

	ref := refs.Next() // client monitors server
	server.AddMonitor(ref, "client")
	client.AddWatching(ref, "server")

	if target, ok := client.RemoveWatching(ref); ok { // Demonitor(ref)
		fmt.Println("demonitor", target, server.RemoveMonitor(ref))
	}
	// Output:
	// demonitor server true
}

// A link has a half on each side, made and removed in one step. A death
// closes one side; its exit signal then removes the survivor's half, and is
// delivered only if that half was still there.
func ExampleLink() {
	var a, b monitor.Node[pid]
	fmt.Println(monitor.Link(&a, "a", &b, "b") == monitor.Linked, a.HasLink("b"), b.HasLink("a"))

	a.Close() // a died; it returned b, whose signal is on its way
	// a's orphaned handler cannot unlink: the signal still goes out.
	fmt.Println(monitor.Unlink(&a, "a", &b, "b"), b.HasLink("a"))
	fmt.Println(b.RemoveLink("a")) // the exit signal: deliver it
	// Output:
	// true true true
	// false true
	// true
}

func ExampleRoute() {
	kill := monitor.Signal{Kind: monitor.Kill}
	linkedCrash := monitor.Signal{Kind: monitor.Other, Link: true}
	normal := monitor.Signal{Kind: monitor.Normal}

	fmt.Println(monitor.Route(kill, true, false))         // exit(P, kill): untrappable
	fmt.Println(monitor.Route(linkedCrash, false, false)) // a linked peer crashed
	fmt.Println(monitor.Route(linkedCrash, true, false))  // ... and we trap exits
	fmt.Println(monitor.Route(normal, false, false))      // exit(P, normal)
	fmt.Println(monitor.Route(normal, false, true))       // exit(self(), normal)
	// Output:
	// DieKilled
	// Die
	// DeliverExit
	// Ignore
	// Die
}

func ExampleRefs() {
	var refs monitor.Refs // the zero Refs is ready; one per system
	fmt.Println(refs.Next(), refs.Next(), refs.Next())
	// Output:
	// 1 2 3
}
