package transporttest

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// logs keeps what a member's consumer and engine log, for the checks and
// for the report of a failed test.
type logs struct {
	mu      sync.Mutex
	lines   []string // the last maxLines records, all levels
	warns   int      // records at Warn or above
	waiters []logWaiter
}

type logWaiter struct {
	n  int
	ch chan struct{}
}

// maxLines bounds the records kept for a failure's report.
const maxLines = 200

func newLogs() *logs { return &logs{} }

func (l *logs) logger() *slog.Logger { return slog.New(&logHandler{l: l}) }

// warned returns a channel closed once n records at Warn or above were
// logged.
func (l *logs) warned(n int) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan struct{})
	if l.warns >= n {
		close(ch)
		return ch
	}
	l.waiters = append(l.waiters, logWaiter{n: n, ch: ch})
	return ch
}

func (l *logs) warnCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.warns
}

func (l *logs) dump(t *testing.T, name string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) > 0 {
		t.Logf("%s logged (last %d records):\n%s", name, len(l.lines), strings.Join(l.lines, "\n"))
	}
}

type logHandler struct {
	l     *logs
	attrs []slog.Attr
	group string
}

func (h *logHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", r.Time.Format("15:04:05.000"), r.Level, r.Message)
	for _, a := range h.attrs {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
	}
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l := h.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) == maxLines {
		l.lines = l.lines[1:]
	}
	l.lines = append(l.lines, b.String())
	if r.Level >= slog.LevelWarn {
		l.warns++
		kept := l.waiters[:0]
		for _, w := range l.waiters {
			if l.warns >= w.n {
				close(w.ch)
			} else {
				kept = append(kept, w)
			}
		}
		l.waiters = kept
	}
	return nil
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logHandler{l: h.l, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...), group: h.group}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{l: h.l, attrs: h.attrs, group: name}
}
