package main

import (
	"io"
	"log/slog"
)

// quietLogger drops the runtime's operator logs: the report says what
// happened instead.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
