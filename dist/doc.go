// Package dist makes a Colony System an Erlang node: it speaks the Erlang
// distribution protocol, so a Colony node joins an Erlang or Elixir
// cluster, and Colony nodes cluster with each other over the same wire.
//
//	sys, _ := actor.Start(actor.Config{})
//	n, err := dist.Start(sys, dist.Config{Name: "colony@127.0.0.1", Cookie: "secret"})
//	...
//	err = n.Ping(ctx, "erl@127.0.0.1")              // nil: pong
//	sys.Send(remotePid, "hello")                    // a pid of another node: sent over the wire
//	n.SendName(self, "echo", "erl@127.0.0.1", msg)  // {echo, 'erl@127.0.0.1'} ! Msg
//
// From Erlang, `net_adm:ping('colony@127.0.0.1')` returns pong, and
// `{echo, 'colony@127.0.0.1'} ! Msg` reaches the Colony actor registered
// as "echo". Terms map to Go values as package etf documents.
//
// # What a node is
//
// Start listens, registers with EPMD (see EPMDMode for what happens on a
// machine where no epmd runs), installs the System's route for remote pids
// (actor.System.SetRemote: a System without distribution pays nothing),
// and spawns the node's net_kernel actor. That actor holds the node: when
// it dies (Stop, or System.Shutdown) every connection is closed, the EPMD
// registration ends, and Shutdown waits for the node's goroutines.
//
// A connection to a peer is made on the first send to it (Erlang's
// auto-connect), or by Connect, Ping, or the peer connecting. Messages
// sent before it is up are queued (bounded) and go out once it is; if it
// cannot be made they are dropped, as Erlang drops messages to a node it
// cannot reach. Each connection has one reader goroutine, which delivers
// incoming messages to local actors in the order the peer sent them
// (messages from one sender arrive in send order, across the wire as
// locally), and one writer goroutine.
//
// # Guarantees and limits
//
// Sends never block: a peer whose queue holds Config.MaxQueue bytes not
// yet written refuses with ErrBusy. A peer's bytes are untrusted: frames
// and reassembled messages are bounded by Config.MaxMessage, and any
// protocol violation closes that connection only (logged), never the node.
// The node identities (name, creation) a peer's pids introduce are bounded
// per connection (Config.NodeIdentityBurst and NodeIdentityRate; past them
// ErrNodeBudget closes it), and the process gives back the identities no
// pid names any more, so a node meets new peers for as long as it runs.
// Order holds per connection and is lost across a reconnect, as in OTP.
// See docs/distribution.md for the flags and control messages handled.
//
// # Links, monitors and exits across nodes
//
// A remote pid is a pid to Context.Link, Unlink, Monitor, Demonitor and
// Exit, to System.Exit and System.Monitor, and Context.MonitorNameAt
// monitors {Name, Node}: the node implements actor.RemoteSignals with OTP
// 26's link protocol (LINK, UNLINK_ID, UNLINK_ID_ACK), EXIT and EXIT2, and
// MONITOR_P by pid or name (link.go). The messages are actor.Exit and
// actor.Down with the remote pid; when a connection is lost every link and
// monitor over it fires once with actor.NoConnection, and MonitorNode
// (erlang:monitor_node/2) gives a NodeDown.
//
// # Calls and remote spawn
//
// A remote pid is a pid to Context.Call, System.Call and CallContext too,
// and CallName calls {Name, Node}: OTP's gen:call protocol both ways (a
// monitor of the callee, the request tagged with the monitor's alias, no
// stray reply after a timeout), so an Erlang gen_server:call reaches a
// Colony Server's HandleCall as a Request, and a Colony call reaches an
// Erlang gen_server (call.go). RegisterSpawn names behaviours peers start
// here with Erlang's spawn/4 (colony:Name, or M:F) or Spawn, SpawnLink and
// SpawnMonitor from another Colony node; RegisterRPC names functions
// erpc:call and rpc:call run here, by name and arity ("M:F/N"). The node
// runs rex, the rpc server, so rpc:block_call, sbcast and old nodes' rpc
// are served, and answers a documented set of BIFs (erlang:node/0,
// system_info/1, memory/0, ...) that tools and health checks call
// (spawn.go, erpc.go, rex.go, bif.go).
//
// # Clusters
//
// Nodes lists the visible nodes connected: that is the cluster. Config.Seeds
// and Config.DNSSeed (A or SRV records) name nodes to stay connected to: the
// node dials each at Start, retries with backoff while it is down, and dials
// again when its connection is lost (cluster.go). Membership is not
// transitive (no global runs): give every node the same seeds for a full
// mesh. Process groups across Colony and Erlang nodes: package dist/pg.
package dist
