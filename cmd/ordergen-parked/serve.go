package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/ordergen/ordergen/runtime/console"
	"github.com/ordergen/ordergen/runtime/inspect"
	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// storeConsole returns the web console over s: read-only, or, with
// actions, with replay and discard buttons that leave requests for the
// running service.
func storeConsole(s *sqlstore.Store, actions bool, logger *slog.Logger) (*console.Console, error) {
	cfg := console.Config{
		Catalog:    catalog(s),
		Transports: []inspect.Transport{outboxView{store: s}},
		Logger:     logger,
		Title:      "ordergen-parked",
	}
	if actions {
		// Whoever reaches the address may ask: -addr is loopback unless the
		// operator chose otherwise. The log names them by their address.
		cfg.Authorize = func(r *http.Request, _ console.Action) (string, error) {
			return "ordergen-parked serve client " + r.RemoteAddr, nil
		}
	}
	return console.New(cfg)
}

// shutdownWait bounds how long serve waits for requests in progress when it
// stops.
const shutdownWait = 5 * time.Second

func serve(ctx context.Context, s *sqlstore.Store, in []string, out io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "")
	actions := fs.Bool("actions", false, "")
	if _, err := args(fs, in, 0, false); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(out, nil))
	c, err := storeConsole(s, *actions, logger)
	if err != nil {
		return err
	}
	defer c.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	mode := "read-only (-actions to replay and discard)"
	if *actions {
		mode = "replay and discard leave requests for the running service"
	}
	fmt.Fprintf(out, "console at http://%s/ (%s); interrupt to stop\n", ln.Addr(), mode)
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownWait)
	defer cancel()
	err = srv.Shutdown(sctx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
