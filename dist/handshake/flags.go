package handshake

import (
	"math/bits"
	"strconv"
	"strings"
)

// Flags are the distribution capability flags a node announces in the
// handshake (OTP's dist.h, DFLAG_*). A connection's effective flags are
// what both ends announced.
type Flags uint64

// The flags, with OTP's names.
const (
	Published          Flags = 0x01
	AtomCache          Flags = 0x02
	ExtendedReferences Flags = 0x04
	DistMonitor        Flags = 0x08
	FunTags            Flags = 0x10
	DistMonitorName    Flags = 0x20
	HiddenAtomCache    Flags = 0x40
	NewFunTags         Flags = 0x80
	ExtendedPidsPorts  Flags = 0x100
	ExportPtrTag       Flags = 0x200
	BitBinaries        Flags = 0x400
	NewFloats          Flags = 0x800
	UnicodeIO          Flags = 0x1000
	DistHdrAtomCache   Flags = 0x2000
	SmallAtomTags      Flags = 0x4000
	UTF8Atoms          Flags = 0x10000
	MapTag             Flags = 0x20000
	BigCreation        Flags = 0x40000
	SendSender         Flags = 0x80000
	BigSeqTraceLabels  Flags = 0x100000
	ExitPayload        Flags = 0x400000
	Fragments          Flags = 0x800000
	Handshake23        Flags = 0x1000000
	UnlinkID           Flags = 0x2000000
	Mandatory25Digest  Flags = 0x4000000
	Spawn              Flags = 1 << 32
	NameMe             Flags = 1 << 33
	V4NC               Flags = 1 << 34
	Alias              Flags = 1 << 35
)

// Mandatory25 is what OTP 25 requires of a peer; Mandatory26 what OTP 26
// adds (a peer without them is refused: "cannot handle [UNLINK_ID]").
// Mandatory is both: what this package requires by default.
const (
	Mandatory25 = ExtendedReferences | FunTags | ExtendedPidsPorts | UTF8Atoms |
		NewFunTags | BigCreation | NewFloats | MapTag | ExportPtrTag | BitBinaries |
		Handshake23
	Mandatory26 = V4NC | UnlinkID
	Mandatory   = Mandatory25 | Mandatory26
)

// expand applies Mandatory25Digest: a node that sets it has every flag of
// Mandatory25, whether it lists them or not (OTP 25's digest flag).
func (f Flags) expand() Flags {
	if f&Mandatory25Digest != 0 {
		f |= Mandatory25
	}
	return f
}

var flagNames = map[Flags]string{
	Published: "PUBLISHED", AtomCache: "ATOM_CACHE", ExtendedReferences: "EXTENDED_REFERENCES",
	DistMonitor: "DIST_MONITOR", FunTags: "FUN_TAGS", DistMonitorName: "DIST_MONITOR_NAME",
	HiddenAtomCache: "HIDDEN_ATOM_CACHE", NewFunTags: "NEW_FUN_TAGS",
	ExtendedPidsPorts: "EXTENDED_PIDS_PORTS", ExportPtrTag: "EXPORT_PTR_TAG",
	BitBinaries: "BIT_BINARIES", NewFloats: "NEW_FLOATS", UnicodeIO: "UNICODE_IO",
	DistHdrAtomCache: "DIST_HDR_ATOM_CACHE", SmallAtomTags: "SMALL_ATOM_TAGS",
	UTF8Atoms: "UTF8_ATOMS", MapTag: "MAP_TAG", BigCreation: "BIG_CREATION",
	SendSender: "SEND_SENDER", BigSeqTraceLabels: "BIG_SEQTRACE_LABELS",
	ExitPayload: "EXIT_PAYLOAD", Fragments: "FRAGMENTS", Handshake23: "HANDSHAKE_23",
	UnlinkID: "UNLINK_ID", Mandatory25Digest: "MANDATORY_25_DIGEST", Spawn: "SPAWN",
	NameMe: "NAME_ME", V4NC: "V4_NC", Alias: "ALIAS",
}

// String lists the flags set, by OTP's names ("[EXTENDED_REFERENCES,
// UTF8_ATOMS]"); a bit with no name prints as its hex value.
func (f Flags) String() string {
	var names []string
	for f != 0 {
		bit := Flags(1) << bits.TrailingZeros64(uint64(f))
		f &^= bit
		if n, ok := flagNames[bit]; ok {
			names = append(names, n)
		} else {
			names = append(names, "0x"+strconv.FormatUint(uint64(bit), 16))
		}
	}
	return "[" + strings.Join(names, ",") + "]"
}
