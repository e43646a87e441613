package actor

import (
	"context"
	"fmt"
	"log/slog"
)

// Reports.
//
// Every report the runtime writes (a crash, a supervisor's report, a
// watchdog retake) is one Report value. System.Report hands it to
// Config.Reporter, if set, as it is: typed fields a service can count,
// alert on or log as structured records (SlogReporter). It also hands it to
// Config.Logger as one line of text (Report.Text), followed on lines of its
// own by a panic's stack: the Logger is the default sink, so a crash is
// never silent, and stays one call per report, so concurrent reports never
// interleave their lines.

// ReportKind tells what a Report is about.
type ReportKind uint8

const (
	// CrashReport: an actor's handler panicked, or a Server stopped with a
	// reason other than normal or shutdown (OTP's crash_report).
	CrashReport ReportKind = iota + 1
	// SupervisorReport: a supervisor's child failed to start or restart,
	// terminated, or did not stop as asked, or the supervisor gave up
	// (OTP's supervisor_report).
	SupervisorReport
	// WatchdogReport: the watchdog handed a scheduler role on, past a
	// handler that held it for over Config.WatchdogThreshold.
	WatchdogReport
	// OtherReport: a report written with System.Log, or one a package
	// built on the System writes with System.Report for its own events.
	OtherReport
)

func (k ReportKind) String() string {
	switch k {
	case CrashReport:
		return "crash_report"
	case SupervisorReport:
		return "supervisor_report"
	case WatchdogReport:
		return "watchdog_report"
	case OtherReport:
		return "report"
	}
	return fmt.Sprintf("ReportKind(%d)", uint8(k))
}

// Report is one report, as Config.Reporter receives it. Fields that do not
// apply to a report's Kind are zero.
type Report struct {
	Kind ReportKind
	// Context says what happened, as OTP's reports do: "exited" for a
	// crash; for a supervisor "start_error" (a child failed to start or
	// restart), "child_terminated", "shutdown_error" (a child did not stop
	// as asked) or "shutdown" (the restart intensity was reached); for the
	// watchdog "retake" (a role handed on) or "returned" (the handler
	// that held it returned at last: Pid names its actor).
	Context string
	// Pid is the actor the report is about: the crashed actor, the
	// supervisor, or the actor whose handler held a retaken role. Zero
	// for a watchdog retake.
	Pid Pid
	// Name is Pid's registered name (a supervisor's Spec.Name), if any.
	Name string
	// ChildID and ChildPids name the child a supervisor report is about:
	// several pids for a shutdown_error of SimpleOneForOne children that
	// ended with the same reason (one report per reason, as OTP writes).
	ChildID   string
	ChildPids []Pid
	// Reason is the crashed actor's exit reason, or the child's.
	Reason Reason
	// Replaced is, for a crash report of a Server whose Terminate changed
	// an abnormal reason (by a Stop or a panic), the reason it was
	// stopping with; Stack then holds, in order, the exit reason's stack
	// if it is a panic, a line naming the replaced reason, and that
	// reason's stack if it is a panic (so Stack is not empty then, panic
	// or not: it is what Logger gets after Text).
	Replaced Reason
	// Stack is a panic's stack, for a crash report of a panic (and see
	// Replaced).
	Stack string
	// Scheduler is the scheduler index of a watchdog report.
	Scheduler int
	// Text is the report as one line, as Config.Logger receives it (with
	// Stack after it, on lines of its own).
	Text string
	// Extra holds fields of the writer's own, for a report written with
	// System.Report by code built on the System (the runtime's reports
	// have none); Attrs appends them after the rest. Config.Logger gets
	// Text only.
	Extra []slog.Attr
}

// Report writes r: to Config.Reporter, if set, and to Config.Logger as
// text (see Config.Logger for when that is the default logger). Packages
// built on the System write their reports through it (the supervisor's).
// It must not be called with the System's locks held (none are exported).
func (sys *System) Report(r Report) {
	if f := sys.cfg.Reporter; f != nil {
		f(r)
	}
	sys.obs.report(r) // WatchReports (observe.go)
	if f := sys.cfg.Logger; f != nil {
		if r.Stack != "" {
			f("%s\n%s", r.Text, r.Stack)
		} else {
			f("%s", r.Text)
		}
	}
}

// SlogReporter adapts a log/slog Logger to Config.Reporter: each report
// becomes one record whose message is Report.Text and whose attributes are
// its fields (Report.Attrs). Watchdog reports are logged at level Warn,
// every other report (crash, supervisor, System.Log's) at Error. A nil l is slog.Default() at the
// time of each report. With Config.Logger left nil, the records are the
// only copy of the reports.
func SlogReporter(l *slog.Logger) func(Report) {
	return func(r Report) {
		l := l
		if l == nil {
			l = slog.Default()
		}
		level := slog.LevelError
		if r.Kind == WatchdogReport {
			level = slog.LevelWarn
		}
		l.LogAttrs(context.Background(), level, r.Text, r.Attrs()...)
	}
}

// Attrs returns r's fields as slog attributes, those that apply: kind,
// context, pid, name, child_id, child_pid (a string, or a list of them
// for several), reason and replaced (as text), scheduler, stack, then
// Extra.
func (r Report) Attrs() []slog.Attr {
	as := make([]slog.Attr, 0, 8+len(r.Extra))
	as = append(as, slog.String("kind", r.Kind.String()))
	if r.Context != "" {
		as = append(as, slog.String("context", r.Context))
	}
	if !r.Pid.IsZero() {
		as = append(as, slog.String("pid", r.Pid.String()))
	}
	if r.Name != "" {
		as = append(as, slog.String("name", r.Name))
	}
	if r.ChildID != "" {
		as = append(as, slog.String("child_id", r.ChildID))
	}
	switch len(r.ChildPids) {
	case 0:
	case 1:
		as = append(as, slog.String("child_pid", r.ChildPids[0].String()))
	default:
		ps := make([]string, len(r.ChildPids))
		for i, p := range r.ChildPids {
			ps[i] = p.String()
		}
		as = append(as, slog.Any("child_pid", ps))
	}
	if r.Reason != nil {
		as = append(as, slog.String("reason", fmt.Sprint(r.Reason)))
	}
	if r.Replaced != nil {
		as = append(as, slog.String("replaced", fmt.Sprint(r.Replaced)))
	}
	if r.Kind == WatchdogReport {
		as = append(as, slog.Int("scheduler", r.Scheduler))
	}
	if r.Stack != "" {
		as = append(as, slog.String("stack", r.Stack))
	}
	return append(as, r.Extra...)
}
