package dist

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/dist/epmd"
	"github.com/colonyrt/colony/dist/etf"
)

// EPMDMode says how a node finds or provides its port mapper.
type EPMDMode uint8

const (
	// EPMDAuto (the zero value) registers with the epmd running on
	// 127.0.0.1 at EPMDPort; if none answers, it starts one as erl does
	// (`epmd -daemon`, see EPMDDaemon) and, where no epmd binary is
	// installed, serves an EPMD-compatible registrar from this process.
	EPMDAuto EPMDMode = iota
	// EPMDExternal registers with a running epmd and fails if none runs.
	EPMDExternal
	// EPMDServe serves the registrar from this process (it fails if the
	// port is taken): the node's peers on this machine find each other
	// through it, for as long as the node runs.
	EPMDServe
	// EPMDNone registers nowhere: the node dials peers (looking them up in
	// their hosts' epmd) but no peer can find it.
	EPMDNone
)

// Config configures a node. Name and Cookie are required; every other zero
// field takes the default documented on it.
type Config struct {
	// Name is the node's full name, "alive@host" (an Erlang long name such
	// as "colony@127.0.0.1"). The host part is where peers look the node
	// up; it is never guessed from the machine's hostname.
	Name string
	// Cookie is the shared secret of the cluster (erl's -setcookie), as
	// text. OTP's cookie is an atom, and the handshake digests its
	// characters as bytes, so the digest is of the cookie's Latin-1
	// encoding ("cøøkie" is 6 bytes), as an Erlang node's is. Start
	// refuses a cookie that is not UTF-8, has a character past U+00FF
	// (OTP cannot digest it: every handshake of such a node fails) or
	// more than 255 characters (no atom is that long).
	Cookie string
	// ListenAddr is the distribution listener's address. Default: the
	// name's host with port 0 when the host is an IP literal ("127.0.0.1:0"
	// for "colony@127.0.0.1"), else ":0".
	ListenAddr string
	// Hidden makes the node hidden (erl's -hidden): its connections do not
	// appear in its peers' nodes(), nor theirs in its Nodes().
	Hidden bool
	// TickTime is net_ticktime: a connection silent for about TickTime (4
	// ticks of TickTime/4 with nothing read) is declared down, and a tick
	// is written every TickTime/4 that nothing else was. Default: 60 s,
	// as in OTP. Both ends should use the same value.
	TickTime time.Duration
	// HandshakeTimeout bounds a connection's setup, EPMD lookup included
	// (net_setuptime). Default: 7 s.
	HandshakeTimeout time.Duration
	// NameTimeout bounds the time an incoming connection may take to send
	// its name, the handshake's first message, after it is accepted; the
	// handshake then has until HandshakeTimeout. Default: 2 s (at most
	// HandshakeTimeout).
	NameTimeout time.Duration
	// MaxHandshakes bounds the incoming handshakes under way at once (the
	// connections that have not proved the cookie yet). When all are in
	// use, a new connection takes the slot of a silent one (no name yet)
	// of the source address holding the most slots: a peer that speaks
	// promptly always gets in, whatever others hold open
	// (docs/distribution.md, "Handshake slots"). Default: 64; at most
	// 65,536.
	MaxHandshakes int
	// EPMD says how the node registers (see EPMDMode). Default: EPMDAuto.
	EPMD EPMDMode
	// EPMDPort is the port of epmd on every host. Default: ERL_EPMD_PORT
	// from the environment, else 4369.
	EPMDPort int
	// EPMDDaemon is the epmd program EPMDAuto runs when no epmd answers.
	// Default "": "epmd" looked up on PATH. "-": never run one (serve the
	// registrar from this process instead).
	EPMDDaemon string
	// MaxMessage bounds one incoming message: a frame, a fragmented
	// message reassembled, a compressed term inflated, and all the partly
	// received fragmented messages of one connection together. OTP has no
	// such bound. A send past it (SEND, REG_SEND, ALIAS_SEND...) is refused:
	// skipped as it arrives, counted in Stats.Oversized and logged, the
	// connection kept; any other control message past it (an exit, a
	// monitor's Down with a large reason, a spawn request) closes the
	// connection, as losing it would break a link or monitor (oversize.go).
	// Default: 128 MiB (DefaultMaxMessage, etf.DefaultMaxSize), which takes
	// a 70 MiB binary; a connection holds at most about 2.5 times it while
	// receiving (one frame and the open fragmented messages, each at 1.25
	// times its size), so size it to the node's memory divided by its
	// peers (docs/distribution.md, "Bad input and bounds").
	MaxMessage int
	// MaxQueue bounds the bytes queued for one peer that its writer has
	// not taken yet (the batch being written is not counted, so at most
	// about twice this is held); a send past it fails with ErrBusy (OTP
	// suspends the sender instead: a Send here never blocks). A single
	// message larger than MaxQueue is taken when the queue is empty.
	// Default: 64 MiB.
	MaxQueue int
	// NodeIdentityBurst and NodeIdentityRate bound the node identities
	// (name, creation) one connection may introduce to the process: pids
	// of nodes that no pid in the process names yet, its peer's own
	// excepted. A token bucket of NodeIdentityBurst identities refilled at
	// NodeIdentityRate a second; a peer past it is disconnected, logged
	// and counted (Stats.NodeBudgetExceeded), its other traffic and every
	// other peer unharmed (docs/distribution.md, "Node identities").
	// Defaults: 4,096 and 64.
	NodeIdentityBurst, NodeIdentityRate int
	// Logger receives the node's log lines: errors (a refused cookie, a
	// peer that broke the protocol, a tick timeout) at Warn and Error,
	// connections up and down at Info, the rest at Debug. Default (nil):
	// warnings and errors go to the System's reports (System.Report, so
	// the System's Logger prints them); nothing else is logged.
	Logger *slog.Logger
	// OnNodeDown, if set, is called once for every connection that was up
	// and is lost (closed by the peer, a network error, a tick timeout, a
	// protocol violation, Disconnect, Stop), on the connection's goroutine,
	// after the connection is removed from Nodes and its links and
	// monitors have fired with noconnection (link.go): it must not block.
	OnNodeDown func(node actor.Atom, reason error)

	// Seeds are nodes this node keeps connected to (see cluster.go): it
	// dials each one at Start, retries with backoff while it is down
	// (between SeedRetryMin and SeedRetryMax), and dials again when its
	// connection is lost. This node's own name is skipped, so every node
	// of a cluster may be given the same list.
	Seeds []actor.Atom
	// DNSSeed, if its Name is set, adds the nodes a DNS name resolves to
	// to Seeds, resolved at Start and every DNSSeed.Refresh.
	DNSSeed DNSSeed
	// SeedRetryMin and SeedRetryMax bound the delay between two attempts
	// to connect to a seed that is down. Defaults: 100 ms and 5 s.
	SeedRetryMin, SeedRetryMax time.Duration
}

// Defaults.
const (
	DefaultTickTime         = 60 * time.Second
	DefaultHandshakeTimeout = 7 * time.Second
	DefaultMaxMessage       = 128 << 20
	DefaultMaxQueue         = 64 << 20

	DefaultNodeIdentityBurst = 4096
	DefaultNodeIdentityRate  = 64
)

// maxMaxHandshakes bounds Config.MaxHandshakes: eviction scans the table.
const maxMaxHandshakes = 1 << 16

// ErrBadConfig: Start was given a Config it cannot use.
var ErrBadConfig = errors.New("dist: bad config")

// config is a Config with its defaults applied and the name split.
type config struct {
	Config
	alive, host string
	cookie      string // the bytes the handshake digests (cookieBytes)
}

func (c Config) check() (config, error) {
	bad := func(format string, args ...any) (config, error) {
		return config{}, fmt.Errorf("%w: "+format, append([]any{ErrBadConfig}, args...)...)
	}
	alive, host, ok := strings.Cut(c.Name, "@")
	switch {
	case !ok || alive == "" || host == "" || strings.Contains(host, "@"):
		return bad("Name %q is not alive@host", c.Name)
	case len([]rune(c.Name)) > 255:
		return bad("Name of more than 255 characters")
	case c.Cookie == "":
		return bad("empty Cookie")
	}
	cookie, err := cookieBytes(c.Cookie)
	if err != nil {
		return bad("%v", err)
	}
	switch {
	case c.TickTime < 0 || c.HandshakeTimeout < 0 || c.NameTimeout < 0 || c.MaxMessage < 0 || c.MaxQueue < 0 || c.EPMDPort < 0 || c.EPMDPort > 65535:
		return bad("negative TickTime, HandshakeTimeout, NameTimeout, MaxMessage, MaxQueue or EPMDPort")
	case c.MaxHandshakes < 0 || c.MaxHandshakes > maxMaxHandshakes:
		return bad("MaxHandshakes %d is not within 0..%d", c.MaxHandshakes, maxMaxHandshakes)
	case c.NodeIdentityBurst < 0 || c.NodeIdentityRate < 0:
		return bad("negative NodeIdentityBurst or NodeIdentityRate")
	case c.EPMD > EPMDNone:
		return bad("EPMD mode %d", c.EPMD)
	}
	if err := epmdCheckName(alive); err != nil {
		return bad("%v", err)
	}
	if c.TickTime == 0 {
		c.TickTime = DefaultTickTime
	}
	if c.TickTime < 4*time.Millisecond {
		return bad("TickTime %v is below 4 ms", c.TickTime)
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.NameTimeout == 0 {
		c.NameTimeout = DefaultNameTimeout
	}
	c.NameTimeout = min(c.NameTimeout, c.HandshakeTimeout)
	if c.MaxHandshakes == 0 {
		c.MaxHandshakes = DefaultMaxHandshakes
	}
	if c.MaxMessage == 0 {
		c.MaxMessage = DefaultMaxMessage
	}
	if c.MaxQueue == 0 {
		c.MaxQueue = DefaultMaxQueue
	}
	if c.NodeIdentityBurst == 0 {
		c.NodeIdentityBurst = DefaultNodeIdentityBurst
	}
	if c.NodeIdentityRate == 0 {
		c.NodeIdentityRate = DefaultNodeIdentityRate
	}
	if c.EPMDPort == 0 {
		c.EPMDPort = epmd.DefaultPort
		if s := os.Getenv("ERL_EPMD_PORT"); s != "" {
			if p, err := strconv.Atoi(s); err == nil && p > 0 && p < 65536 {
				c.EPMDPort = p
			}
		}
	}
	if err := c.checkSeeds(); err != nil {
		return bad("%v", err)
	}
	if c.ListenAddr == "" {
		if net.ParseIP(host) != nil {
			c.ListenAddr = net.JoinHostPort(host, "0")
		} else {
			c.ListenAddr = ":0"
		}
	}
	return config{Config: c, alive: alive, host: host, cookie: cookie}, nil
}

// cookieBytes is the cookie as OTP digests it. An Erlang node's cookie is
// an atom, and the handshake's digest is erlang:md5([atom_to_list(Cookie)
// | integer_to_list(Challenge)]) (dist_util:gen_digest/2): an iolist, in
// which each character is a byte, so the cookie's Latin-1 bytes.
// -setcookie 'cøøkie' (decoded from UTF-8 arguments by init) and
// erlang:set_cookie/1 make such an atom, and a Colony node with that
// Cookie and an Erlang node then accept each other. What OTP cannot
// represent is refused: a character past U+00FF is no byte (OTP 25 takes
// the cookie, then every handshake crashes with badarg in erlang:md5/1,
// so the node connects to nobody), a cookie of more than 255 characters
// is no atom (-setcookie fails at start with system_limit), and a cookie
// that is not UTF-8 is no text.
func cookieBytes(cookie string) (string, error) {
	if !utf8.ValidString(cookie) {
		return "", errors.New("cookie is not valid UTF-8 (give the cookie's text: Latin-1 characters as UTF-8)")
	}
	if n := utf8.RuneCountInString(cookie); n > etf.MaxAtomChars {
		return "", fmt.Errorf("cookie of %d characters: an Erlang cookie is an atom, of %d at most", n, etf.MaxAtomChars)
	}
	b := make([]byte, 0, len(cookie))
	for _, r := range cookie {
		if r > 0xff {
			return "", fmt.Errorf("cookie has %q (U+%04X), past Latin-1: an Erlang node digests its cookie's characters as bytes, and "+
				"cannot digest this one (its handshakes fail with badarg in erlang:md5/1)", r, r)
		}
		b = append(b, byte(r))
	}
	return string(b), nil
}

func epmdCheckName(alive string) error {
	if len(alive) > epmd.MaxNameLen {
		return fmt.Errorf("alive part of %d bytes", len(alive))
	}
	return nil
}

func (c *config) epmdAddr(host string) string {
	return net.JoinHostPort(host, strconv.Itoa(c.EPMDPort))
}
