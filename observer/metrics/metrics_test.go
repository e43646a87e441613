package metrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/observer/metrics"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestServeHTTPAnswersTheTextFormat: GET answers the text exposition
// format with its media type, one HELP and TYPE per family and a series
// per scheduler; another method is a 405. (observer/prom's tests parse
// the text with client_golang and compare it with the collector's.)
func TestServeHTTPAnswersTheTextFormat(t *testing.T) {
	sys, err := actor.Start(actor.Config{Schedulers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sys.Shutdown(ctx)
	}()
	m := metrics.New(sys)
	defer m.Close()
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); rec.Code != 200 || ct != metrics.ContentType {
		t.Fatalf("GET: %d %q", rec.Code, ct)
	}
	body := rec.Body.String()
	for _, d := range m.Descs() {
		if d.Name == "colony_supervisor_restarts_total" || d.Name == "colony_supervisor_shutdowns_total" {
			continue // no supervisor: no series
		}
		if n := strings.Count(body, "# TYPE "+d.Name+" "+d.Kind.String()+"\n"); n != 1 {
			t.Errorf("%s: %d TYPE lines", d.Name, n)
		}
	}
	for _, want := range []string{`colony_scheduler_busy_seconds_total{scheduler="0"} `, `colony_scheduler_busy_seconds_total{scheduler="1"} `,
		`colony_message_handling_seconds_bucket{le="+Inf"} `, "colony_mailbox_length_count 0\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in:\n%s", want, body)
		}
	}
	rec = httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/metrics", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", rec.Code)
	}
}

// TestConstLabelsMisusePanics: a label name that is not one, or that
// Colony's metrics use, is a caller's mistake.
func TestConstLabelsMisusePanics(t *testing.T) {
	sys, err := actor.Start(actor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Shutdown(context.Background())
	for _, name := range []string{"scheduler", "9lives", "__x", "a-b"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ConstLabels %q: no panic", name)
				}
			}()
			metrics.New(sys, metrics.ConstLabels(map[string]string{name: "v"})).Close()
		}()
	}
}
