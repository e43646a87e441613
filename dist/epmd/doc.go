// Package epmd speaks the Erlang Port Mapper Daemon's protocol (the erts
// guide "Distribution Protocol", section EPMD): a client that registers a
// node (ALIVE2_REQ, kept open for the node's life: closing the connection
// unregisters it) and looks peers up (PORT_PLEASE2_REQ, NAMES_REQ), and
// Server, an EPMD-compatible registrar served from the process itself for a
// machine where no epmd runs.
//
// Every request is a 2-byte big-endian length and that many bytes, the
// first of them the request code. Replies have no length prefix; their
// fields are read one by one, each bounded (a node name at most MaxNameLen
// bytes, Extra at most MaxExtraLen), so a peer's length field never sizes
// an allocation past those bounds.
//
// The node types are those of the protocol: NodeTypeNormal (77, what an
// Erlang node registers) and NodeTypeHidden (72). The protocol is 0
// (TCP/IPv4), the versions 6 (HANDSHAKE_23) down to 5: a node registered as
// version 6 is greeted with the new (version 6) name message by OTP 23 and
// later.
package epmd
