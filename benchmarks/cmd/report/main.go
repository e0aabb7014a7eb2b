// Command report runs the benchmark suite and writes its figures to
// docs/benchmarks.md (a Markdown table with the ratios, the machine, the Go
// version, the date and the commands) and docs/benchmarks.svg (a grouped
// bar chart).
//
// Run it from the benchmarks module:
//
//	cd benchmarks && go run ./cmd/report
//
// It runs BenchmarkDispatch and BenchmarkHotKey with go test, echoing
// their output to stderr as they go. Flags:
//
//	-benchtime D     BenchmarkDispatch's -benchtime (default 1000000x)
//	-hotkey-benchtime D
//	                 BenchmarkHotKey's -benchtime (default 10x)
//	-count N         runs of each benchmark (default 1)
//	-stat S          how to summarise them: median (default), or min, the
//	                 least disturbed run on a machine shared with other work
//	-out DIR         where to write the files (default ../docs)
//	-dir DIR         the benchmarks module (default .)
//	-input FILE      parse this saved go test output instead of running the
//	                 suite (the commands shown are those the flags describe)
//
// The output is deterministic apart from the measured figures, the date
// and the load average.
package main

import (
	"context"
	"fmt"
	"os"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}
