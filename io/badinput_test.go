//go:build linux

package netio_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	netio "github.com/colonyrt/colony/io"
)

// TestRecvBadLengthReadsNothing: Recv of a negative length, or of one past
// MaxRecv, is ErrBadLength and reads nothing: the input is still there for
// the next Recv. (A negative n was taken as 0 and read what was there; a
// huge one was allocated first: a makeslice panic that killed the owner,
// or, below that bound, an allocation that could end the process. gen_tcp
// raises badarg for a negative length and returns {error, enomem} past
// 64 MiB.)
func TestRecvBadLengthReadsNothing(t *testing.T) {
	sys := startSys(t)
	p := newProbe(t, sys)
	cn, cli := listenAccept(t, p)
	defer cli.Close()
	if _, err := cli.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	p.do(t, func(c *actor.Context) {
		// Wait until the input is there, so a refused Recv could read it.
		if b, err := cn.Recv(c, 1, 5*time.Second); err != nil || string(b) != "h" {
			t.Errorf("Recv(1): %q, %v", b, err)
			return
		}
		for _, n := range []int{-1, netio.MaxRecv + 1, 1 << 62} {
			b, err := func() (b []byte, err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panicked: %v", r)
					}
				}()
				return cn.Recv(c, n, 0)
			}()
			if !errors.Is(err, netio.ErrBadLength) || len(b) != 0 {
				t.Errorf("Recv(%d): %q, %v; want nothing and ErrBadLength", n, b, err)
			}
		}
		if b, err := cn.Recv(c, 4, 5*time.Second); err != nil || string(b) != "ello" {
			t.Errorf("Recv(4) after the refused ones: %q, %v; want \"ello\"", b, err)
		}
	})
}
