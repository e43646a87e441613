package monitor

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/internal/erlenv"
)

// TestRoute covers every rule of Route, every combination of its inputs.
// The OTP references are in Route's doc; TestRouteMatchesOTP checks the same
// table against a real Erlang node when one is installed.
func TestRoute(t *testing.T) {
	tests := []struct {
		name                   string
		kind                   Kind
		link, trapping, isSelf bool
		want                   Action
	}{
		// Rule 1: exit(Pid, kill) is untrappable and becomes killed.
		{"exit(P,kill)", Kill, false, false, false, DieKilled},
		{"exit(P,kill) trapping", Kill, false, true, false, DieKilled},
		{"exit(self(),kill)", Kill, false, false, true, DieKilled},
		{"exit(self(),kill) trapping", Kill, false, true, true, DieKilled},
		// Rule 2: a trapping process gets every other signal as a message.
		{"exit(P,normal) trapping", Normal, false, true, false, DeliverExit},
		{"exit(self(),normal) trapping", Normal, false, true, true, DeliverExit},
		{"exit(P,other) trapping", Other, false, true, false, DeliverExit},
		{"exit(self(),other) trapping", Other, false, true, true, DeliverExit},
		{"linked peer exited normal, trapping", Normal, true, true, false, DeliverExit},
		{"linked peer exited kill, trapping", Kill, true, true, false, DeliverExit},
		{"linked peer exited other, trapping", Other, true, true, false, DeliverExit},
		// Rule 3: normal is ignored unless a process sends it to itself.
		{"exit(P,normal)", Normal, false, false, false, Ignore},
		{"linked peer exited normal", Normal, true, false, false, Ignore},
		{"exit(self(),normal)", Normal, false, false, true, Die},
		// Rule 4: any other reason kills with the same reason; a link-carried
		// kill is an ordinary reason (the peer dies with kill, not killed).
		{"exit(P,other)", Other, false, false, false, Die},
		{"exit(self(),other)", Other, false, false, true, Die},
		{"linked peer exited other", Other, true, false, false, Die},
		{"linked peer exited kill", Kill, true, false, false, Die},
	}
	seen := map[[4]any]bool{}
	for _, tt := range tests {
		if got := Route(Signal{tt.kind, tt.link}, tt.trapping, tt.isSelf); got != tt.want {
			t.Errorf("%s: Route(%v, link=%v, trapping=%v, self=%v) = %v, want %v",
				tt.name, tt.kind, tt.link, tt.trapping, tt.isSelf, got, tt.want)
		}
		seen[[4]any{tt.kind, tt.link, tt.trapping, tt.isSelf}] = true
	}
	// The table is complete: every valid input combination is listed.
	for _, k := range []Kind{Normal, Kill, Other} {
		for _, link := range []bool{false, true} {
			for _, trapping := range []bool{false, true} {
				for _, isSelf := range []bool{false, true} {
					if !(link && isSelf) && !seen[[4]any{k, link, trapping, isSelf}] {
						t.Errorf("table misses %v link=%v trapping=%v self=%v", k, link, trapping, isSelf)
					}
				}
			}
		}
	}
}

func TestRouteMisuse(t *testing.T) {
	for _, tc := range []struct {
		name string
		sig  Signal
		self bool
	}{
		{"zero kind", Signal{}, false},
		{"kind out of range", Signal{Kind: Other + 1}, false},
		{"link signal from self", Signal{Kind: Other, Link: true}, true},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), "monitor: ") {
					t.Errorf("%s: recovered %v, want a monitor: panic", tc.name, r)
				}
			}()
			Route(tc.sig, false, tc.self)
		}()
	}
}

// TestRouteMatchesOTP runs testdata/route.escript on a real Erlang node and
// checks Route against every line of what OTP did. Skipped without escript.
func TestRouteMatchesOTP(t *testing.T) {
	escript, err := exec.LookPath("escript")
	if err != nil {
		t.Skip("escript not installed; Route's table is checked by TestRoute alone")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rc := exec.CommandContext(ctx, escript, "testdata/route.escript")
	rc.Env = erlenv.Env()
	out, err := rc.Output()
	if err != nil {
		t.Fatalf("escript: %v\n%s", err, out)
	}
	kinds := map[string]Kind{"Normal": Normal, "Kill": Kill, "Other": Other}
	rows := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var kind, want string
		var link, trapping, isSelf bool
		if _, err := fmt.Sscan(sc.Text(), &kind, &link, &trapping, &isSelf, &want); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		k, ok := kinds[kind]
		if !ok {
			t.Fatalf("bad kind in %q", sc.Text())
		}
		if got := Route(Signal{k, link}, trapping, isSelf).String(); got != want {
			t.Errorf("OTP: %q; Route says %s", sc.Text(), got)
		}
		rows++
	}
	if rows != 30 {
		t.Fatalf("escript printed %d rows, want 30:\n%s", rows, out)
	}
}
