// Package etf encodes and decodes Erlang's External Term Format, the
// encoding of terms in term_to_binary/1 and on the distribution wire (erts
// guide "External Term Format").
//
// # Mapping
//
// Each Erlang term has one canonical Go form, which Decode returns and
// which Encode turns back into the same term, so Go → ETF → Go gives an
// equal value for every canonical value. The encoder also takes the
// convenience forms in the last column; they decode to the canonical form.
//
//	Erlang term                 canonical Go value        also encoded from
//	atom                        actor.Atom                (nil Go value: 'undefined')
//	true, false                 bool                      actor.Atom("true"/"false")
//	integer in int64            int                       int8..int64, uint..uint64, *big.Int, named integer types
//	integer past int64          *big.Int (|x| ≤ 4 MiB)    uint64, uint
//	float                       float64                   float32 (NaN and ±Inf have no term: ErrUnsupported)
//	binary                      string (any bytes)        []byte, [N]byte, named string types
//	bitstring (not whole bytes) BitBinary (Bits 1..7)     BitBinary{Bits: 8} (a binary)
//	[] and proper lists         []any ([] is []any{})     nil []any, other slices and arrays
//	improper list [a | t]       ImproperList              ImproperList with a list Tail (flattened)
//	tuple                       Tuple                     a registered struct (Register)
//	{Tag, ...} of a registered  the registered type T     *T
//	  tag and arity
//	map                         map[any]any               other Go maps
//	map a Go map cannot hold    Map (pairs in wire order)
//	pid                         actor.Pid (local or remote)
//	reference                   Ref
//	port                        Port
//	fun M:F/A                   Export
//	local fun                   Fun (opaque bytes)
//
// Strings. A Go string is an Erlang binary, as an Elixir string is, and a
// binary decodes to a Go string: strings hold any bytes, and unlike []byte
// they are comparable, so a map with binary keys (#{<<"id">> => 1}) decodes
// to a map[any]any. []byte encodes to a binary too, and decodes back as a
// string (a registered struct's []byte field gets a []byte). An Erlang
// string "abc" is a list of integers and decodes as one, []any{97, 98, 99};
// a registered struct's string field also takes such a list.
//
// Lists. A list of integers 0..255 shorter than 65,536 elements is sent as
// STRING_EXT, as OTP sends it; it is still a list. The empty list [] (which
// Erlang calls nil) is []any{}; the Go nil value encodes as the atom
// undefined, Erlang's "no value", and that atom decodes as
// actor.Atom("undefined").
//
// Maps. A map decodes to map[any]any when every key is a Go-comparable value
// that compares as the term does (atoms, booleans, ints, floats, strings,
// pids, refs, ports, exports, registered structs of such); otherwise, or if
// two keys collide in Go (0.0 and -0.0, distinct keys since OTP 27), it
// decodes to Map. A map[any]any of at most 32 keys is encoded with its keys
// in term order, as OTP sends such a map, so equal maps give equal bytes
// (OTP's own, for number, atom and binary keys); a larger one, and other Go
// maps, in Go's iteration order. Erlang takes any order.
//
// Pids. The Node of an Encoder or Decoder is this node's identity. A pid of
// Node.Sys encodes as NEW_PID_EXT with Node.Name and Node.Creation and the
// pid's System.LocalParts; a remote pid (actor.RemotePid) with its RemoteID.
// Any other pid (the zero Pid, a pid of another System of this process, any
// pid when Node.Sys is nil and it is not remote) is ErrUnsupported. A decoded
// pid whose node name and creation are Node's becomes Node.Sys.LocalPid(id,
// serial); any other becomes actor.RemotePid, so two decodings of one pid
// are ==. PID_EXT (one-byte creation) is accepted, compared as it is.
//
// References, ports, funs. Refs go out as NEWER_REFERENCE_EXT; NEW_REFERENCE_EXT
// and REFERENCE_EXT are accepted. Ports go out as NEW_PORT_EXT, or V4_PORT_EXT
// for an ID past 32 bits; PORT_EXT is accepted. A local fun is checked
// (its frame, module atom, indices, pid and free variables) and kept as its
// bytes; a fun whose atoms come from a distribution header's atom cache is
// ErrUnsupported, as are the removed FUN_EXT and LOCAL_EXT.
//
// Atoms go out as SMALL_ATOM_UTF8_EXT or ATOM_UTF8_EXT; ATOM_EXT and
// SMALL_ATOM_EXT (Latin-1) are accepted and converted to UTF-8. An atom is at
// most 255 characters, valid UTF-8; an ATOM_CACHE_REF needs Decoder.AtomRefs.
//
// # Registered types
//
// Register[T](tag) makes a struct type travel as the tuple {tag, F1, ...,
// Fn}, which an Erlang programmer matches as {tag, A, B}, and come back as a
// T value. See Register.
//
// # Bounds
//
// The decoder reads a peer's bytes. Every truncated or malformed term is an
// error, never a panic. A length field is checked against the bytes left
// before anything is allocated by it: each element of a list, tuple or map
// needs at least one byte, so a list claiming 2^32-1 elements with 10 bytes
// left is ErrMalformed at once; and the elements the open containers still
// await are reserved against those bytes, so nested containers cannot each
// pre-allocate from the same ones. So memory follows the input: at most
// about 32 bytes of Go values per input byte (TestMemoryPerByte measures
// the costliest shapes at 20 or less), and, while the term nests, a stack
// of 72 bytes a level, grown by doubling: a term that is all nesting, a
// tuple level in 2 bytes, allocates up to 128 bytes per input byte
// (TestDeepMemoryPerByte: 114). Further bounds:
//
//   - Nesting: none but the input's length. The decoder does not recurse
//     (an explicit stack on the heap), so a term as deep as OTP sends (an
//     iolist built by [Acc, X] appends is as deep as its appends) decodes,
//     and no input can exhaust the goroutine's stack. Decoder.MaxDepth sets
//     a bound if wanted (ErrTooDeep).
//   - Size: one term may span at most MaxSize bytes (default
//     DefaultMaxSize, 128 MiB), ErrTooLarge. A compressed term's claimed
//     uncompressed size is checked against MaxSize before inflating, the
//     output grows only as the stream really inflates, and inflating stops
//     one byte past the claim (ErrMalformed).
//   - Big integers: at most MaxBigBytes of magnitude, both ways: OTP's
//     own bound (4,194,296 bytes, about 10 million decimal digits).
//   - Atoms: at most 255 characters (MaxAtomChars). Decoded atoms are
//     interned in a fixed table of 4,096 entries, so a peer cannot grow it.
//   - Remote pids: a pid's node identity enters actor.RemotePid's
//     process-wide table, which gives back identities nobody holds any
//     more; Decoder.NewNode sees each identity a decoding introduced, so
//     that its caller can bound what one peer introduces (ErrTooLarge when
//     it refuses).
//
// Binaries are copied out of the input, unless Decoder.ShareInput says the
// input is the decoded value's to keep: then a binary of at least 64 KiB
// that is more than a quarter of the input shares it, as OTP makes such a
// binary a sub-binary of the distribution buffer.
//
// The encoder does not recurse through tuples, lists and maps either (its
// stack is pooled), and refuses a value that contains itself (ErrTooDeep,
// found by comparing each container with an ancestor's identity, Brent's
// cycle check); through registered structs and typed slices and maps, which
// it walks by reflection and recursion, it bounds nesting at
// DefaultMaxDepth.
//
// Being stricter than binary_to_term: Unmarshal refuses bytes after the
// term (binary_to_term/1 ignores them; Decode reports how many it used), a
// pid with an empty node name, and a reference of no words. Duplicate map
// keys, which binary_to_term refuses, are not looked for: a map[any]any
// cannot hold them, so such a map decodes to Map.
package etf
