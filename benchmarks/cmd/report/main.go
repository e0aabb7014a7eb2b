// Command report runs the benchmark suite and writes its figures to
// docs/benchmarks.md (Markdown tables with the ratios, the machine, the Go
// version, the date and the commands) and docs/benchmarks.svg (a grouped
// bar chart).
//
// Run it from the benchmarks module:
//
//	cd benchmarks && go run ./cmd/report
//
// It compiles the benchmarks once (go test -c), then runs rounds: in each,
// BenchmarkDispatch, BenchmarkHotKey and BenchmarkKafkaNoop once
// (-test.count=1), so that every peer's runs are interleaved with the
// others' over the whole report. It echoes their output to stderr as it
// goes. Flags:
//
//	-benchtime D     BenchmarkDispatch's -benchtime (default 1000000x)
//	-hotkey-benchtime D
//	                 BenchmarkHotKey's -benchtime (default 10x)
//	-kafka-benchtime D
//	                 BenchmarkKafkaNoop's -benchtime (default 2x:
//	                 both orders of the two consumers)
//	-count N         rounds: runs of each benchmark (default 5)
//	-stat S          how to summarise them: median (default), or min, the
//	                 least disturbed run on a machine shared with other work
//	                 (the lowest cost, the highest rate such as records/s)
//	-out DIR         where to write the files (default ../docs)
//	-dir DIR         the benchmarks module (default .)
//	-input FILE      parse this saved benchmark output instead of running
//	                 the suite (the commands shown are those the flags
//	                 describe)
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
