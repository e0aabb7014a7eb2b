package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Result is one line of `go test -bench` output.
type Result struct {
	// Name is the benchmark's name without the -GOMAXPROCS suffix, for
	// example "BenchmarkDispatch/uniform-noop/ordergen".
	Name string
	// Procs is GOMAXPROCS during the run (the suffix), or 1 without one.
	Procs int
	// Iterations is b.N of the run.
	Iterations int64
	// Metrics maps a unit ("ns/op", "allocs/op", "ns/last-cold") to its
	// value.
	Metrics map[string]float64
}

// Output is what a benchmark run printed.
type Output struct {
	// Header holds the "key: value" lines (goos, goarch, pkg, cpu).
	Header map[string]string
	// Results holds the benchmark lines, in order.
	Results []Result
}

// Parse reads `go test -bench` output. It keeps the header lines and the
// benchmark result lines and ignores everything else (PASS, ok, logs).
func Parse(r io.Reader) (Output, error) {
	out := Output{Header: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for line := 0; sc.Scan(); {
		line++
		text := sc.Text()
		if strings.HasPrefix(text, "Benchmark") {
			res, ok, err := parseResult(text)
			if err != nil {
				return Output{}, fmt.Errorf("line %d: %w", line, err)
			}
			if ok {
				out.Results = append(out.Results, res)
			}
			continue
		}
		if k, v, ok := strings.Cut(text, ": "); ok && isHeaderKey(k) {
			out.Header[k] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return Output{}, fmt.Errorf("read benchmark output: %w", err)
	}
	return out, nil
}

// isHeaderKey reports whether k is one of the keys go test prints before
// the results.
func isHeaderKey(k string) bool {
	switch k {
	case "goos", "goarch", "pkg", "cpu":
		return true
	}
	return false
}

// parseResult parses "BenchmarkX/y-2  1000  12.5 ns/op  0 B/op ...". A line
// that starts like a benchmark but has no iteration count (a benchmark
// that logged, or failed) is skipped with ok false.
func parseResult(text string) (res Result, ok bool, err error) {
	fields := strings.Fields(text)
	if len(fields) < 2 {
		return Result{}, false, nil
	}
	n, convErr := strconv.ParseInt(fields[1], 10, 64)
	if convErr != nil {
		return Result{}, false, nil
	}
	if len(fields)%2 != 0 {
		return Result{}, false, fmt.Errorf("benchmark %s: value without unit", fields[0])
	}
	res = Result{Iterations: n, Metrics: map[string]float64{}}
	res.Name, res.Procs = splitProcs(fields[0])
	for i := 2; i < len(fields); i += 2 {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			return Result{}, false, fmt.Errorf("benchmark %s: value %q: %w", fields[0], fields[i], err)
		}
		res.Metrics[fields[i+1]] = v
	}
	return res, true, nil
}

// splitProcs splits "BenchmarkX/y-8" into "BenchmarkX/y" and 8.
func splitProcs(name string) (string, int) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name, 1
	}
	p, err := strconv.Atoi(name[i+1:])
	if err != nil || p <= 0 {
		return name, 1
	}
	return name[:i], p
}
