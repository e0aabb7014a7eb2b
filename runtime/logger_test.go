package runtime_test

import (
	"context"
	"io"
	"log/slog"
)

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// signalLogger sends the message of every record to ch, so a test can wait
// for "ordergen: key parked" instead of sleeping.
type signalLogger struct{ ch chan string }

func newSignalLogger() (*slog.Logger, chan string) {
	ch := make(chan string, 100)
	return slog.New(signalLogger{ch}), ch
}

func (s signalLogger) Enabled(context.Context, slog.Level) bool { return true }
func (s signalLogger) Handle(_ context.Context, r slog.Record) error {
	select {
	case s.ch <- r.Message:
	default:
	}
	return nil
}
func (s signalLogger) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s signalLogger) WithGroup(string) slog.Handler      { return s }

// waitFor reads messages from ch until msg arrives.
func waitFor(ch chan string, msg string) {
	for m := range ch {
		if m == msg {
			return
		}
	}
}
