package observer_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/internal/testsys"
	"github.com/colonyrt/colony/observer"
	"github.com/colonyrt/colony/supervisor"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve starts a System and an observer server for it; both stop at the
// test's end (the server first).
func serve(t *testing.T, opts ...observer.Option) (*actor.System, *httptest.Server) {
	t.Helper()
	sys := testsys.Start(t, actor.Config{Logger: func(string, ...any) {}})
	srv := httptest.NewServer(observer.Handler(sys, opts...))
	t.Cleanup(srv.Close)
	return sys, srv
}

// get fetches path and decodes the JSON answer into v (if not nil); it
// returns the status code.
func get(t *testing.T, srv *httptest.Server, path string, v any) int {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	return resp.StatusCode
}

func post(t *testing.T, srv *httptest.Server, path string, form url.Values) (int, map[string]any) {
	t.Helper()
	return postBody(t, srv, path, form.Encode(), true)
}

// postBody posts a form body, with the page's action header if header.
func postBody(t *testing.T, srv *httptest.Server, path, form string, header bool) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if header {
		req.Header.Set("X-Colony-Observer", "1")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// poll retries cond until it holds or 10 s pass.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sleeper blocks in Sleep on its first message, so what is sent after
// stays in its mailbox.
func sleeper(c *actor.Context, msg any) { c.Sleep(time.Hour) }

// TestPageIsServed: the page is served for any query (its own state: a
// bookmark of a tab or an actor), refers to nothing off the machine, and
// embeds the current series, its last sample measured over a window, so
// it first renders real figures (the live actors, the message rate).
func TestPageIsServed(t *testing.T) {
	sys, srv := serve(t)
	echo, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	for i := 0; i < 10; i++ {
		sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	}
	stop := make(chan struct{})
	sending := make(chan struct{})
	go func() {
		defer close(sending)
		for {
			select {
			case <-stop:
				return
			default:
				sys.Send(echo, 1)
			}
		}
	}()
	defer func() { close(stop); <-sending }()
	for _, path := range []string{"/", "/index.html", "/?tab=procs&sort=rate&rows=100", "/?pid=" + url.QueryEscape("<1.2.3>") + "&tab=x&tab=y&junk", "/?%zz"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(body), "Colony observer") {
			t.Fatalf("page %s: %d %q, %d bytes", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
		for _, ref := range []string{"http://", "https://", "//cdn"} {
			if strings.Contains(string(body), ref) {
				t.Fatalf("the page refers to %q: it must work offline", ref)
			}
		}
		const open = `<script id="boot" type="application/json">`
		i := strings.Index(string(body), open)
		j := strings.Index(string(body)[i+1:], "</script>")
		if i < 0 || j < 0 {
			t.Fatalf("page %s embeds no figures", path)
		}
		var boot struct {
			IntervalMS int64 `json:"interval_ms"`
			Samples    []struct {
				Live        int     `json:"live"`
				HandledRate float64 `json:"handled_rate"`
			} `json:"samples"`
		}
		if err := json.Unmarshal([]byte(string(body)[i+len(open):i+1+j]), &boot); err != nil {
			t.Fatalf("page %s: the embedded figures: %v", path, err)
		}
		if n := len(boot.Samples); boot.IntervalMS != 1000 || n == 0 || boot.Samples[n-1].Live < 11 || boot.Samples[n-1].HandledRate <= 0 {
			t.Fatalf("page %s embeds %+v: want the live actors and a message rate", path, boot)
		}
	}
}

// TestMountedUnderAPrefix: under StripPrefix, the bare prefix redirects
// to itself with a slash (the page's relative URLs need it).
func TestMountedUnderAPrefix(t *testing.T) {
	sys := testsys.Start(t, actor.Config{})
	mux := http.NewServeMux()
	mux.Handle("/debug/observer/", http.StripPrefix("/debug/observer", observer.Handler(sys)))
	mux.Handle("/debug/observer", http.StripPrefix("/debug/observer", observer.Handler(sys)))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(srv.URL + "/debug/observer")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "observer/" {
		t.Fatalf("bare prefix: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var ov map[string]any
	if code := get(t, srv, "/debug/observer/api/overview", &ov); code != 200 || ov["node"] == nil {
		t.Fatalf("overview under the prefix: %d %v", code, ov)
	}
}

func TestOverviewAndSeries(t *testing.T) {
	sys, srv := serve(t)
	for i := 0; i < 10; i++ {
		sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	}
	var ov struct {
		Node       uint32 `json:"node"`
		Live       int    `json:"live"`
		Spawned    uint64 `json:"spawned"`
		Schedulers []struct {
			Utilisation float64 `json:"utilisation"`
		} `json:"schedulers"`
	}
	if code := get(t, srv, "/api/overview", &ov); code != 200 {
		t.Fatalf("overview: %d", code)
	}
	if ov.Node != sys.Node() || ov.Live < 10 || ov.Spawned < 10 || len(ov.Schedulers) != len(sys.Stats().Schedulers) {
		t.Fatalf("overview %+v", ov)
	}
	var series struct {
		IntervalMS int               `json:"interval_ms"`
		Samples    []json.RawMessage `json:"samples"`
	}
	if code := get(t, srv, "/api/series", &series); code != 200 || series.IntervalMS != 1000 || len(series.Samples) == 0 {
		t.Fatalf("series: %d %+v", code, series)
	}
}

type actorsPage struct {
	Rows []struct {
		Pid     string `json:"pid"`
		Name    string `json:"name"`
		State   string `json:"state"`
		Mailbox int    `json:"mailbox"`
		Rate    uint64 `json:"rate"`
		Memory  int    `json:"memory"`
	} `json:"rows"`
	Total int `json:"total"`
	Top   int `json:"top"`
	Next  int `json:"next"`
}

// TestProcessTableSortsByMailbox: the actor with the longest mailbox
// heads the table sorted by mailbox; the unsorted table pages through
// every actor by cursor.
func TestProcessTableSortsByMailbox(t *testing.T) {
	sys, srv := serve(t)
	long, _ := sys.Spawn(actor.ActorFunc(sleeper), actor.Name("long_mailbox"))
	short, _ := sys.Spawn(actor.ActorFunc(sleeper))
	for i := 0; i < 30; i++ {
		sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	}
	sys.Send(long, "sleep")
	sys.Send(short, "sleep")
	poll(t, "both to sleep", func() bool {
		a, _ := sys.Info(long)
		b, _ := sys.Info(short)
		return a.State == actor.StateBlocked && b.State == actor.StateBlocked
	})
	for i := 0; i < 7; i++ {
		sys.Send(long, i)
	}
	sys.Send(short, 0)
	var p actorsPage
	if code := get(t, srv, "/api/actors?sort=mailbox&limit=2", &p); code != 200 {
		t.Fatalf("sorted page: %d", code)
	}
	if len(p.Rows) != 2 || p.Rows[0].Pid != long.String() || p.Rows[0].Mailbox != 7 || p.Rows[0].Name != "long_mailbox" ||
		p.Rows[0].State != actor.StateBlocked || p.Rows[1].Pid != short.String() || p.Rows[1].Mailbox != 1 || p.Total < 32 {
		t.Fatalf("sorted by mailbox: %+v", p)
	}
	// The distribution: buckets double (0, 1, 2-3, 4-7, ...), so the
	// mailbox of 7 and the one of 1 each have a bucket of their own.
	var dist struct {
		Bounds []int `json:"mailbox_buckets"`
		Counts []int `json:"mailbox_counts"`
	}
	get(t, srv, "/api/actors?sort=mailbox&limit=1", &dist)
	if len(dist.Bounds) < 10 || dist.Bounds[0] != 0 || dist.Bounds[1] != 1 || dist.Bounds[2] != 3 || dist.Bounds[3] != 7 ||
		len(dist.Counts) != len(dist.Bounds)+1 || dist.Counts[1] != 1 || dist.Counts[3] != 1 || dist.Counts[0] < 30 || dist.Counts[2] != 0 {
		t.Fatalf("mailbox distribution %+v", dist)
	}
	var q actorsPage
	get(t, srv, "/api/actors?sort=state&limit=2", &q)
	if len(q.Rows) != 2 || q.Rows[0].State != actor.StateBlocked {
		t.Fatalf("sorted by state: %+v", q)
	}
	seen := map[string]bool{}
	for cursor, pages := 0, 0; cursor >= 0; pages++ {
		var pg actorsPage
		if code := get(t, srv, fmt.Sprintf("/api/actors?limit=10&cursor=%d", cursor), &pg); code != 200 || len(pg.Rows) > 10 || pages > 10 {
			t.Fatalf("page from %d: %d, %d rows", cursor, code, len(pg.Rows))
		}
		for _, r := range pg.Rows {
			seen[r.Pid] = true
		}
		cursor = pg.Next
	}
	if !seen[long.String()] || !seen[short.String()] || len(seen) < 32 {
		t.Fatalf("paging saw %d actors", len(seen))
	}
}

// TestBadInputIsRefused: every endpoint answers bad input with a 4xx and
// a JSON error, and changes nothing.
func TestBadInputIsRefused(t *testing.T) {
	sys, srv := serve(t)
	dead, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	w, _ := sys.Monitor(dead)
	sys.Exit(dead, actor.Kill)
	<-w.Done()
	other, _ := actor.ParsePid(fmt.Sprintf("<%d.1.1>", sys.Node()+1000))
	for _, c := range []struct {
		path string
		code int
	}{
		{"/api/actors?sort=bogus", 400},
		{"/api/actors?limit=abc", 400},
		{"/api/actors?limit=0", 400},
		{"/api/actors?limit=1000000", 400},
		{"/api/actors?sort=mailbox&offset=-1", 400},
		{"/api/actors?sort=mailbox&offset=99999999", 400},
		{"/api/actors?sort=mailbox&cursor=3", 400},
		{"/api/actors?offset=3", 400},
		{"/api/actors?cursor=-5", 400},
		{"/api/actors?limit=1&limit=2", 400},
		{"/api/actors?nonsense=1", 400},
		{"/api/actors?%zz", 400},
		{"/api/actor", 400},
		{"/api/actor?pid=banana", 400},
		{"/api/actor?pid=<1.2>", 400},
		{"/api/actor?pid=" + url.QueryEscape("<0.0.0>"), 400},
		{"/api/actor?pid=" + url.QueryEscape(dead.String()), 404},
		{"/api/actor?pid=" + url.QueryEscape(other.String()), 404},
		{"/api/actor?pid=" + url.QueryEscape(dead.String()) + "&peek=5000", 400},
		{"/api/crashes?limit=-1", 400},
		{"/api/crashes?since=x", 400},
		{"/api/overview?x=1", 400},
		{"/api/tree?depth=3", 400},
		{"/api/nothing", 404},
		{"/api/kill", 405},
		{"/api/send", 405},
	} {
		var body map[string]string
		code := get(t, srv, c.path, &body)
		if code != c.code || body["error"] == "" {
			t.Errorf("GET %s: %d %v, want %d with an error", c.path, code, body, c.code)
		}
	}
	live, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	for _, path := range []string{"/api/kill", "/api/send"} {
		code, body := post(t, srv, path, url.Values{"pid": {live.String()}, "msg": {"hi"}})
		if code != http.StatusForbidden || body["error"] == nil {
			t.Errorf("POST %s without AllowActions: %d %v", path, code, body)
		}
	}
	code, _ := post(t, srv, "/api/overview", nil)
	if code != http.StatusMethodNotAllowed {
		t.Errorf("POST /api/overview: %d", code)
	}
	if !sys.Alive(live) {
		t.Fatal("a refused kill killed")
	}
}

// TestActionsWhenEnabled: kill and send with AllowActions; bad pids are
// still refused.
func TestActionsWhenEnabled(t *testing.T) {
	sys, srv := serve(t, observer.AllowActions())
	got := make(chan any, 1)
	pid, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) { got <- msg }))
	if code, body := post(t, srv, "/api/send", url.Values{"pid": {pid.String()}, "msg": {"hello"}}); code != 200 {
		t.Fatalf("send: %d %v", code, body)
	}
	if m := <-got; m != "hello" {
		t.Fatalf("the actor got %v", m)
	}
	w, _ := sys.Monitor(pid)
	if code, body := post(t, srv, "/api/kill", url.Values{"pid": {pid.String()}}); code != 200 {
		t.Fatalf("kill: %d %v", code, body)
	}
	<-w.Done()
	if w.Reason() != actor.Killed {
		t.Fatalf("killed with %v", w.Reason())
	}
	for _, c := range []struct {
		form url.Values
		code int
	}{
		{url.Values{"pid": {pid.String()}}, 404},
		{url.Values{"pid": {"nope"}}, 400},
		{url.Values{}, 400},
		{url.Values{"pid": {pid.String()}, "reason": {strings.Repeat("r", 300)}}, 400},
	} {
		if code, _ := post(t, srv, "/api/kill", c.form); code != c.code {
			t.Errorf("kill %v: %d, want %d", c.form, code, c.code)
		}
	}
	if code, _ := postBody(t, srv, "/api/send", "pid="+url.QueryEscape(pid.String())+"&msg="+strings.Repeat("x", 200<<10), true); code != 400 {
		t.Fatalf("a 200 KiB form: %d", code)
	}
	live, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	if code, body := postBody(t, srv, "/api/kill", url.Values{"pid": {live.String()}}.Encode(), false); code != http.StatusForbidden || !sys.Alive(live) {
		t.Fatalf("a kill without the page's header (a cross-site form): %d %v", code, body)
	}
}

// TestActorDetail: an idle actor's peek is empty; a blocked one shows its
// stack and its queued messages are reported as not peekable.
func TestActorDetail(t *testing.T) {
	sys, srv := serve(t)
	idle, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}), actor.Name("idle_one"))
	var d map[string]any
	poll(t, "an idle actor's empty peek", func() bool {
		d = nil
		get(t, srv, "/api/actor?pid="+url.QueryEscape(idle.String()), &d)
		p, ok := d["mailbox_peek"].([]any)
		return ok && len(p) == 0
	})
	if d["name"] != "idle_one" || d["state"] == nil {
		t.Fatalf("detail %v", d)
	}
	blocked, _ := sys.Spawn(actor.ActorFunc(sleeper))
	get(t, srv, "/api/overview", nil) // turns the sampling on before the block, for its stack
	sys.Send(blocked, "sleep")
	sys.Send(blocked, "queued")
	poll(t, "the blocked stack", func() bool {
		d = nil
		get(t, srv, "/api/actor?pid="+url.QueryEscape(blocked.String())+"&peek=3", &d)
		s, _ := d["stack"].(string)
		return strings.Contains(s, "sleeper")
	})
	if d["mailbox_peek_error"] == nil || d["mailbox"].(float64) != 1 {
		t.Fatalf("blocked detail: %v", d)
	}
}

type tree struct {
	Trees []*treeNode `json:"trees"`
}

type treeNode struct {
	Pid      string                   `json:"pid"`
	ID       string                   `json:"id"`
	Kind     string                   `json:"kind"`
	Alive    bool                     `json:"alive"`
	Restarts uint64                   `json:"restarts"`
	LastExit *struct{ Reason string } `json:"last_exit"`
	Children []*treeNode              `json:"children"`
}

// TestCrashShowsInTreeAndLog: a supervised child's crash is in the crash
// log and, with its restart, in the tree.
func TestCrashShowsInTreeAndLog(t *testing.T) {
	sys := testsys.Start(t, actor.Config{Logger: func(string, ...any) {}})
	worker := func(c *actor.Context, _ ...any) (actor.Pid, error) {
		return c.SpawnLink(actor.ActorFunc(func(c *actor.Context, msg any) {
			if msg == "crash" {
				panic("worker boom")
			}
		}))
	}
	inner := supervisor.Spec{Name: "inner_sup", Children: []supervisor.ChildSpec{{ID: "w", Start: worker}}}
	root, err := supervisor.Start(sys, supervisor.Spec{Name: "root_sup", Intensity: 5, Period: time.Minute,
		Children: []supervisor.ChildSpec{supervisor.Child("inner", inner)}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(observer.Handler(sys, observer.Supervisors(root)))
	defer srv.Close()
	var tr tree
	// Polled: a supervisor that does not answer WhichChildren within the
	// observer's 500 ms (a loaded machine) shows as an error node.
	poll(t, "the tree before the crash", func() bool {
		tr = tree{}
		get(t, srv, "/api/tree", &tr)
		return len(tr.Trees) == 1 && tr.Trees[0].Pid == root.String() && len(tr.Trees[0].Children) == 1 &&
			tr.Trees[0].Children[0].ID == "inner" && len(tr.Trees[0].Children[0].Children) == 1
	})
	wpid, _ := actor.ParsePid(tr.Trees[0].Children[0].Children[0].Pid)
	sys.Send(wpid, "crash")
	poll(t, "the restart in the tree", func() bool {
		tr = tree{}
		get(t, srv, "/api/tree", &tr)
		if len(tr.Trees) != 1 || len(tr.Trees[0].Children) != 1 || len(tr.Trees[0].Children[0].Children) != 1 {
			return false
		}
		in := tr.Trees[0].Children[0]
		w := in.Children[0]
		return in.Restarts == 1 && w.LastExit != nil && strings.Contains(w.LastExit.Reason, "worker boom") && w.Alive && w.Pid != wpid.String()
	})
	var log struct {
		Entries []struct {
			Kind, Pid, Reason, Stack string
		} `json:"entries"`
		CrashReports int `json:"crash_reports"`
	}
	get(t, srv, "/api/crashes", &log)
	found := false
	for _, e := range log.Entries {
		if e.Kind == "crash_report" && e.Pid == wpid.String() && strings.Contains(e.Reason, "worker boom") && strings.Contains(e.Stack, "panic") {
			found = true
		}
	}
	if !found || log.CrashReports != 1 {
		t.Fatalf("crash log: %+v", log)
	}
}

// TestEventStream: the stream sends a sample at once and a crash event
// when an actor crashes.
func TestEventStream(t *testing.T) {
	sys, srv := serve(t, observer.Interval(100*time.Millisecond))
	resp, err := http.Get(srv.URL + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	rd := bufio.NewReader(resp.Body)
	next := func() (name, data string) {
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case strings.HasPrefix(line, "event: "):
				name = line[7:]
			case strings.HasPrefix(line, "data: "):
				data = line[6:]
			case line == "" && name != "":
				return name, data
			}
		}
	}
	if name, data := next(); name != "sample" || !strings.Contains(data, `"live"`) {
		t.Fatalf("first event %q %q", name, data)
	}
	pid, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) { panic("streamed crash") }))
	sys.Send(pid, 1)
	for {
		name, data := next()
		if name == "crash" {
			if !strings.Contains(data, "streamed crash") {
				t.Fatalf("crash event %s", data)
			}
			break
		}
	}
}
