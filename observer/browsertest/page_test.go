// Package browsertest drives the observer page in a real headless
// Chromium (Debian's chromium package) with chromedp: its own module, so
// the library's go.mod does not carry a browser driver.
//
//	cd observer/browsertest && go test ./...
//
// Without chromium the test skips, loudly; with CI=true it fails. With
// OBSERVER_SCREENSHOTS=dir it writes its screenshots there (the ones in
// docs/observer were made with OBSERVER_SCREENSHOTS=../../docs/observer).
package browsertest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/observer"
	"github.com/colonyrt/colony/supervisor"
)

// browser finds Chromium, or skips (fails under CI).
func browser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "SKIPPING the observer's browser test: no chromium on PATH (apt-get install -y chromium)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " — CI=true: the browser test must run in CI")
	}
	t.Skip(msg)
	return ""
}

// TestObserverPageInChromium: the page loads with no console error and
// first renders real figures (from the snapshot the server embeds, before
// the live stream opens); Chromium's "networkIdle" lifecycle event comes
// (what a headless browser told to wait for the page to settle waits
// for); the tab and the selected actor live in the URL, Back undoes them,
// and a link to them opens them; the process table shows a spawned actor,
// and its mailbox of 205 among 500 empty ones shows as a bar of its own in
// the logarithmic histogram; a supervised worker's crash shows in the
// crash log and in the tree within seconds.
func TestObserverPageInChromium(t *testing.T) {
	exe := browser(t)
	sys, err := actor.Start(actor.Config{Logger: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sys.Shutdown(ctx)
	}()

	// A tree: app -> {api (a worker that crashes on demand), jobs -> 3 workers}.
	crashy := func(c *actor.Context, _ ...any) (actor.Pid, error) {
		return c.SpawnLink(actor.ActorFunc(func(c *actor.Context, msg any) {
			if msg == "crash" {
				panic("browser-test crash: bad request")
			}
		}), actor.Name("api_handler"))
	}
	plain := func(c *actor.Context, _ ...any) (actor.Pid, error) {
		return c.SpawnLink(actor.ActorFunc(func(*actor.Context, any) {}))
	}
	jobs := supervisor.Spec{Name: "jobs", Children: []supervisor.ChildSpec{{ID: "job1", Start: plain}, {ID: "job2", Start: plain}, {ID: "job3", Start: plain}}}
	root, err := supervisor.Start(sys, supervisor.Spec{Name: "app", Intensity: 10, Period: time.Minute,
		Children: []supervisor.ChildSpec{{ID: "api", Start: crashy}, supervisor.Child("jobs", jobs)}})
	if err != nil {
		t.Fatal(err)
	}
	// The actor the process table must show: asleep, with a long mailbox,
	// so it heads the table sorted by mailbox.
	// (It is sent to sleep once the page is open: a blocked handler's
	// stack is kept only for blocks that begin while observed.)
	probe, _ := sys.Spawn(actor.ActorFunc(func(c *actor.Context, msg any) { c.Sleep(time.Hour) }), actor.Name("spawned_probe"))
	for i := 0; i < 500; i++ {
		sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	}
	// Some traffic for the charts.
	stopLoad := make(chan struct{})
	var loadDone sync.WaitGroup
	loadDone.Add(1)
	echo, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}))
	go func() {
		defer loadDone.Done()
		tk := time.NewTicker(10 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stopLoad:
				return
			case <-tk.C:
				for i := 0; i < 200; i++ {
					sys.Send(echo, i)
				}
			}
		}
	}()
	defer func() { close(stopLoad); loadDone.Wait() }()

	srv := httptest.NewServer(observer.Handler(sys, observer.Supervisors(root), observer.Interval(200*time.Millisecond)))
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 860))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// The first Do starts the browser; it must not carry a timeout (that
	// would stop the browser): later steps have deadlines of their own.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	// The lifecycle events of every navigation (networkIdle among them),
	// and what the page showed when its document was parsed (its scripts
	// have run by then; the stream opens later).
	var lifeMu sync.Mutex
	var lifecycle []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*page.EventLifecycleEvent); ok {
			lifeMu.Lock()
			lifecycle = append(lifecycle, e.Name)
			lifeMu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
			document.addEventListener("DOMContentLoaded", () => {
				window.firstRender = {
					conn: document.querySelector("#connText").textContent,
					cards: Object.fromEntries([...document.querySelectorAll("#cards .card")].map(c => [c.querySelector(".k").textContent, c.querySelector(".v").textContent])),
				};
			});`})
		return err
	})); err != nil {
		t.Fatal(err)
	}
	waitLifecycle := func(name string, after int) error {
		deadline := time.Now().Add(30 * time.Second)
		for {
			lifeMu.Lock()
			seen := slices.Contains(lifecycle[min(after, len(lifecycle)):], name)
			n := len(lifecycle)
			lifeMu.Unlock()
			if seen {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("no %q lifecycle event within 30 s (%d events since the navigation)", name, n-after)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	var mu sync.Mutex
	var consoleErrors []string
	messages := chromedp.Console(ctx)
	var listening sync.WaitGroup
	listening.Add(1)
	go func() {
		defer listening.Done()
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				consoleErrors = append(consoleErrors, m.String()+" "+m.URL)
				mu.Unlock()
			}
		}
	}()
	defer func() { cancel(); listening.Wait() }()

	shots := os.Getenv("OBSERVER_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := func(name string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			buf, err := chromedp.CaptureScreenshot()(ctx, tg)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(shots, name), buf, 0o644)
		})
	}
	// wait polls a JS condition with a deadline of its own (no sleeps).
	wait := func(what, js string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second) // a bound for failure: a cold Chromium on a busy machine is slow
			defer cancel()
			if _, err := chromedp.Poll[chromedp.Void](js, chromedp.WithPollingInterval(50*time.Millisecond))(wctx, tg); err != nil {
				return fmt.Errorf("waiting for %s: %w", what, err)
			}
			return nil
		})
	}
	click := func(sel string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if _, err := chromedp.Click(chromedp.CSS(sel))(cctx, tg); err != nil {
				return fmt.Errorf("click %s: %w", sel, err)
			}
			return nil
		})
	}
	text := func(sel string) string {
		return fmt.Sprintf("(document.querySelector(%q) || {textContent: ''}).textContent", sel)
	}

	// The first render: real figures, from before the stream opened.
	lifeMu.Lock()
	mark := len(lifecycle)
	lifeMu.Unlock()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	type firstRender struct {
		Conn  string            `json:"conn"`
		Cards map[string]string `json:"cards"`
	}
	first, err := chromedp.Run(ctx, chromedp.Evaluate[firstRender](`window.firstRender`))
	if err != nil {
		t.Fatal(err)
	}
	num := func(s string) float64 {
		var f float64
		fmt.Sscan(strings.ReplaceAll(s, ",", ""), &f)
		return f
	}
	if first.Conn == "live" || num(first.Cards["live actors"]) < 500 || num(first.Cards["messages/s"]) <= 0 {
		t.Fatalf("the first render (before the stream): %+v, want the 500 live actors and a message rate", first)
	}
	t.Logf("the first render: %+v", first)
	// The page settles: Chromium reports the network idle.
	if err := waitLifecycle("networkIdle", mark); err != nil {
		t.Fatal(err)
	}
	location := func() string {
		loc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.search`))
		if err != nil {
			t.Fatal(err)
		}
		return loc
	}

	err = chromedp.Do(ctx,
		wait("the live stream", `document.querySelector("#connText").textContent === "live"`),
		wait("a dashboard with some history", `series.length >= 12 && document.querySelectorAll("#cards .card").length > 5`),
		chromedp.Func(func(context.Context, *chromedp.Target) error {
			sys.Send(probe, "sleep")
			for i := 0; i < 205; i++ {
				sys.Send(probe, fmt.Sprintf("job %d", i))
			}
			return nil
		}),
		shot("dashboard.png"),

		click(`#tabs button[data-tab="procs"]`),
		wait("the tab in the URL", `location.search === "?tab=procs"`),
		wait("the spawned actor in the process table", fmt.Sprintf(
			`[...document.querySelectorAll("#procTable tbody tr")].some(r => r.dataset.pid === %q && r.textContent.includes("spawned_probe") && r.textContent.includes("205"))`, probe.String())),
		// One actor with 205 messages among 500 idle: a bar of its own,
		// as visible as any, and the empty buckets beside it flat.
		wait("the lone mailbox in the histogram", `(() => {
			const one = document.querySelector('#mboxDist div[data-range="128–255"]'), none = document.querySelector('#mboxDist div[data-range="64–127"]');
			const idle = document.querySelector('#mboxDist div[data-range="0"]');
			return one && none && idle && one.dataset.count === "1" && one.offsetHeight >= 10 && none.offsetHeight <= 1 && +idle.dataset.count >= 500;
		})()`),
		shot("processes.png"),

		click(fmt.Sprintf(`#procTable tbody tr[data-pid="%s"]`, probe.String())),
		wait("the actor's detail", `document.querySelector("#detail.on") && `+text("#detail")+`.includes("Blocked handler's stack") && `+text("#detail")+`.includes("or blocked")`),
		wait("the actor in the URL", fmt.Sprintf(`new URLSearchParams(location.search).get("pid") === %q && new URLSearchParams(location.search).get("tab") === "procs"`, probe.String())),
		shot("actor.png"),
		click(`#detail .close`),
		wait("the actor gone from the URL", `location.search === "?tab=procs" && !document.querySelector("#detail.on")`),
		// Back reopens the actor, Back again closes it, and once more
		// goes back to the dashboard.
		chromedp.Evaluate[chromedp.Void](`history.back()`),
		wait("Back to reopen the actor", `document.querySelector("#detail.on") && `+text("#detail h2")+`.includes(`+fmt.Sprintf("%q", probe.String())+`)`),
		chromedp.Evaluate[chromedp.Void](`history.back()`),
		wait("Back to close it", `!document.querySelector("#detail.on") && location.search === "?tab=procs"`),
		chromedp.Evaluate[chromedp.Void](`history.back()`),
		wait("Back to the dashboard", `location.search === "" && document.querySelector("#dash.on") && !document.querySelector("#procs.on")`),
		// sort and page size replace the entry: Back does not step
		// through them.
		click(`#tabs button[data-tab="procs"]`),
		chromedp.SetValue(chromedp.CSS(`#sortKey`), "rate"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#sortKey").dispatchEvent(new Event("change"))`),
		wait("the sort in the URL", `location.search === "?tab=procs&sort=rate"`),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := location(); got != "?tab=procs&sort=rate" {
		t.Fatalf("location %q", got)
	}

	// A link to a view opens it: the tab, the sort and the actor.
	lifeMu.Lock()
	mark = len(lifecycle)
	lifeMu.Unlock()
	err = chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/?tab=procs&sort=handled&pid="+url.QueryEscape(probe.String())),
		wait("the linked view", `document.querySelector("#procs.on") && document.querySelector("#sortKey").value === "handled" && document.querySelector("#detail.on") && `+
			text("#detail h2")+`.includes(`+fmt.Sprintf("%q", probe.String())+`) && `+text("#detail")+`.includes("Mailbox")`),
	)
	if err != nil {
		t.Fatal(err)
	}
	// This page polls its table every 2 s: the network is still idle for
	// the 0.5 s Chromium asks between polls, and the stream opens after.
	if err := waitLifecycle("networkIdle", mark); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		wait("the live stream on the linked view", `document.querySelector("#connText").textContent === "live"`),
		click(`#detail .close`),
		click(`#tabs button[data-tab="dash"]`),
		wait("the dashboard", `location.search === "" && document.querySelector("#dash.on")`),
	)
	if err != nil {
		t.Fatal(err)
	}

	// The crash: it must reach the crash log and the tree within seconds.
	api, ok := sys.Whereis("api_handler")
	if !ok {
		t.Fatal("no api_handler")
	}
	sys.Send(api, "crash")
	err = chromedp.Do(ctx,
		click(`#tabs button[data-tab="crashes"]`),
		wait("the crash in the crash log", text("#crashLog")+`.includes("browser-test crash: bad request") && `+text("#crashLog")+`.includes(`+fmt.Sprintf("%q", api.String())+`)`),
		click(`#crashLog details summary`),
		shot("crashlog.png"),
		click(`#tabs button[data-tab="sups"]`),
		wait("the restart and the last exit in the tree", text("#tree")+`.includes("1 restart") && `+text("#tree")+`.includes("browser-test crash") && `+text("#tree")+`.includes("jobs")`),
		shot("tree.png"),
	)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(consoleErrors) > 0 {
		t.Fatalf("console errors:\n%s", strings.Join(consoleErrors, "\n"))
	}
	t.Logf("screenshots in %s", shots)
}
