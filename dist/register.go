package dist

// The node's EPMD registration, and what it does when no epmd runs.
//
// erl -name starts `epmd -daemon` when none answers, so that the node's
// peers on the machine find each other through a registrar that outlives
// any one of them. EPMDAuto does the same when an epmd program is
// installed: it runs it (with ERL_EPMD_PORT's port, and, unless
// ERL_EPMD_ADDRESS says otherwise, bound to 127.0.0.1 and the node's host
// when that is an IP literal) and registers with it. On a machine with no
// Erlang installed, it serves an EPMD-compatible registrar from this
// process instead (epmd.Server, on 127.0.0.1 at the EPMD port), so that a
// single `go run` works: other nodes on the machine register with it and
// find each other through it, as long as this node runs. The daemon is
// preferred because the in-process registrar dies with its node, and the
// registrations of other nodes with it.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/colonyrt/colony/dist/epmd"
)

func (n *Node) register() (uint32, error) {
	c := &n.cfg
	if c.EPMD == EPMDNone {
		return rand.Uint32()&0x7fffffff | 1, nil
	}
	typ := byte(epmd.NodeTypeNormal)
	if c.Hidden {
		typ = epmd.NodeTypeHidden
	}
	me := epmd.Node{
		Name: c.alive, Port: uint16(n.ln.Addr().(*net.TCPAddr).Port), Type: typ,
		Protocol: epmd.ProtocolTCP, High: epmd.HighVersion, Low: epmd.LowVersion,
	}
	addr := c.epmdAddr("127.0.0.1")
	ctx, cancel := context.WithTimeout(context.Background(), c.HandshakeTimeout)
	defer cancel()
	try := func() (uint32, error) {
		reg, err := epmd.Register(ctx, addr, me)
		if err != nil {
			return 0, err
		}
		n.reg = reg
		return reg.Creation, nil
	}
	switch c.EPMD {
	case EPMDExternal:
		return wrapEPMD(try())
	case EPMDServe:
		if err := n.serveEPMD(addr); err != nil {
			return 0, err
		}
		return wrapEPMD(try())
	}
	// EPMDAuto
	creation, err := try()
	if err == nil || !refused(err) {
		return wrapEPMD(creation, err)
	}
	if started, derr := n.startDaemon(ctx); started {
		for { // the daemon takes a moment to listen
			if creation, err = try(); err == nil || !refused(err) || ctx.Err() != nil {
				return wrapEPMD(creation, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	} else if derr != nil {
		n.logf(levelWarn, "dist: starting epmd: %v; serving a registrar in-process", derr)
	}
	if err := n.serveEPMD(addr); err != nil {
		// Someone else started an epmd meanwhile: use it.
		return wrapEPMD(try())
	}
	n.logf(levelInfo, "dist: no epmd on %s: serving an EPMD-compatible registrar in-process", addr)
	return wrapEPMD(try())
}

func wrapEPMD(creation uint32, err error) (uint32, error) {
	if err != nil {
		return 0, fmt.Errorf("dist: EPMD registration: %w", err)
	}
	return creation, nil
}

func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

func (n *Node) serveEPMD(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("dist: serve EPMD on %s: %w", addr, err)
	}
	n.epmdSrv = epmd.Serve(l)
	return nil
}

// startDaemon runs `epmd -daemon` as erl does. started is false when there
// is no program to run (EPMDDaemon "-", or none on PATH).
func (n *Node) startDaemon(ctx context.Context) (started bool, err error) {
	prog := n.cfg.EPMDDaemon
	if prog == "-" {
		return false, nil
	}
	if prog == "" {
		prog = "epmd"
	}
	path, err := exec.LookPath(prog)
	if err != nil {
		return false, nil
	}
	cmd := exec.CommandContext(ctx, path, "-daemon", "-port", fmt.Sprint(n.cfg.EPMDPort))
	cmd.Env = os.Environ()
	if os.Getenv("ERL_EPMD_ADDRESS") == "" {
		addrs := "127.0.0.1"
		if ip := net.ParseIP(n.cfg.host); ip != nil && !ip.IsLoopback() {
			addrs += "," + ip.String()
		}
		if net.ParseIP(n.cfg.host) != nil {
			cmd.Env = append(cmd.Env, "ERL_EPMD_ADDRESS="+addrs)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return false, fmt.Errorf("%s -daemon: %v: %s", path, err, out)
	}
	n.logf(levelInfo, "dist: started %s -daemon on port %d", path, n.cfg.EPMDPort)
	return true, nil
}
