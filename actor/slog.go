package actor

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// SlogLogger adapts a log/slog Logger to Config.Logger: each crash or
// supervisor report becomes one record at level Error whose message is the
// report (its first line; a panic's stack goes in the "detail" attribute).
// A nil l is slog.Default() at the time of each report. For records whose
// attributes are the report's fields (pid, reason, stack, ...), set
// Config.Reporter to SlogReporter instead.
func SlogLogger(l *slog.Logger) func(format string, args ...any) {
	return func(format string, args ...any) {
		l := l
		if l == nil {
			l = slog.Default()
		}
		msg := fmt.Sprintf(format, args...)
		if line, detail, multi := strings.Cut(msg, "\n"); multi {
			l.LogAttrs(context.Background(), slog.LevelError, line, slog.String("detail", detail))
			return
		}
		l.LogAttrs(context.Background(), slog.LevelError, msg)
	}
}
