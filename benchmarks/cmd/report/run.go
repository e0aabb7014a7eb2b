package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ordergen/ordergen/benchmarks"
	"github.com/ordergen/ordergen/benchmarks/peers"
	"github.com/ordergen/ordergen/benchmarks/workload"
)

// options are the command's flags.
type options struct {
	benchtime       string
	hotKeyBenchtime string
	kafkaBenchtime  string
	count           int
	out             string
	dir             string
	input           string
	stat            Stat
}

// parseFlags reads the command line.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.benchtime, "benchtime", "1000000x", "BenchmarkDispatch's -benchtime")
	fs.StringVar(&o.hotKeyBenchtime, "hotkey-benchtime", "10x", "BenchmarkHotKey's -benchtime")
	fs.StringVar(&o.kafkaBenchtime, "kafka-benchtime", "2x", "BenchmarkKafkaNoop's -benchtime (2x: both orders of the two consumers)")
	fs.IntVar(&o.count, "count", 5, "rounds: runs of each benchmark, every peer interleaved with the others")
	fs.StringVar(&o.out, "out", filepath.Join("..", "docs"), "directory to write benchmarks.md and benchmarks.svg to")
	fs.StringVar(&o.dir, "dir", ".", "the benchmarks module's directory")
	fs.StringVar(&o.input, "input", "", "parse this saved go test output instead of running the suite")
	stat := fs.String("stat", string(Median), "how to summarise -count runs: median, or min (the least disturbed run)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.stat = Stat(*stat)
	if o.stat != Median && o.stat != Min {
		return o, fmt.Errorf("-stat %q: want median or min", *stat)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.count < 1 {
		return o, fmt.Errorf("-count %d: must be at least 1", o.count)
	}
	return o, nil
}

// testBinary is the name of the compiled benchmarks in the commands shown.
const testBinary = "benchmarks.test"

// build returns the command that compiles the benchmarks into binary.
func build(binary string) []string {
	return []string{"go", "test", "-c", "-o", binary, "."}
}

// round returns the commands of one round, run by binary: each benchmark
// once (-test.count=1), every peer and workload in turn. Repeating rounds,
// rather than -count, interleaves the peers: each peer's runs are spread
// over the whole report, so a disturbance of the machine that lasts a
// minute weighs on every peer alike instead of on the one that ran then.
func (o options) round(binary string) [][]string {
	cmd := func(bench, benchtime string) []string {
		return []string{binary, "-test.run", "^$", "-test.bench", "^" + bench + "$", "-test.benchmem",
			"-test.benchtime=" + benchtime, "-test.count=1", "-test.timeout=0"}
	}
	return [][]string{
		cmd(dispatchBench, o.benchtime),
		cmd(hotKeyBench, o.hotKeyBenchtime),
		cmd(kafkaBench, o.kafkaBenchtime),
	}
}

// commands returns the shell lines that reproduce the report's run: the
// build, then count rounds.
func (o options) commands() []string {
	lines := []string{shellQuote(build(testBinary)), fmt.Sprintf("for round in $(seq %d); do", o.count)}
	for _, c := range o.round("./" + testBinary) {
		lines = append(lines, "  "+shellQuote(c))
	}
	return append(lines, "done")
}

// shellQuote renders args as a shell command line.
func shellQuote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " '\"$^*?[]\\|&;<>()`") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// run is the command: it gets the benchmark output, reduces it and writes
// the two files.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	load := loadAverage()
	source := sourceVersion(ctx, o.dir)
	raw, err := o.output(ctx, stderr)
	if err != nil {
		return err
	}
	parsed, err := Parse(strings.NewReader(raw))
	if err != nil {
		return err
	}
	if len(parsed.Results) == 0 {
		return errors.New("the benchmark output holds no results")
	}
	goVer, err := goVersion(ctx, o.dir)
	if err != nil {
		return err
	}
	meta := Meta{
		CPU:          cpuModel(parsed.Header["cpu"]),
		Cores:        cores(),
		Go:           goVer,
		Source:       source,
		Date:         time.Now().UTC().Format(time.DateOnly),
		Load:         load,
		Report:       shellQuote(append([]string{"go", "run", "./cmd/report"}, args...)),
		Commands:     o.commands(),
		Workers:      benchmarks.Workers,
		Keys:         workload.NumKeys,
		HotKeyEvents: benchmarks.HotKeyEvents,
		KafkaRecords: benchmarks.KafkaNoopRecords,
		Partitions:   benchmarks.KafkaPartitions,
	}
	if o.input != "" {
		meta.Report = "" // the output was not produced by this command line
	}
	figures := Reduce(parsed.Results, o.stat)
	suite := defaultSuite()
	var md, svg bytes.Buffer
	if err := WriteMarkdown(&md, meta, suite, figures, raw); err != nil {
		return err
	}
	if err := WriteSVG(&svg, suite, figures); err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	for name, data := range map[string][]byte{"benchmarks.md": md.Bytes(), "benchmarks.svg": svg.Bytes()} {
		if err := writeFileAtomic(filepath.Join(o.out, name), data); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "wrote %s and %s\n", filepath.Join(o.out, "benchmarks.md"), filepath.Join(o.out, "benchmarks.svg"))
	return nil
}

// defaultSuite names the suite's workloads and peers in report order.
func defaultSuite() Suite {
	s := Suite{Reference: "pool", Striped: "striped", Subject: "ordergen", Generated: "generated", Policies: "policies"}
	for _, w := range workload.Dispatch() {
		s.Workloads = append(s.Workloads, w.Name)
	}
	for _, p := range peers.All() {
		s.Peers = append(s.Peers, p.Name)
	}
	return s
}

// output returns the benchmark output: the -input file's, or that of the
// suite run now, round after round, echoed to stderr as it comes.
func (o options) output(ctx context.Context, stderr io.Writer) (string, error) {
	if o.input != "" {
		b, err := os.ReadFile(o.input)
		if err != nil {
			return "", fmt.Errorf("read benchmark output: %w", err)
		}
		return string(b), nil
	}
	tmp, err := os.MkdirTemp("", "ordergen-report-")
	if err != nil {
		return "", fmt.Errorf("build the benchmarks: %w", err)
	}
	defer os.RemoveAll(tmp)
	binary := filepath.Join(tmp, testBinary)
	if err := o.exec(ctx, build(binary), stderr, stderr); err != nil {
		return "", err
	}
	var all bytes.Buffer
	for r := range o.count {
		fmt.Fprintf(stderr, "# round %d of %d\n", r+1, o.count)
		for _, args := range o.round(binary) {
			if err := o.exec(ctx, args, io.MultiWriter(&all, stderr), stderr); err != nil {
				return "", err
			}
		}
	}
	return all.String(), nil
}

// exec runs args in the benchmarks module, echoing the command line.
func (o options) exec(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fmt.Fprintf(stderr, "$ %s\n", shellQuote(args))
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = o.dir
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", shellQuote(args), err)
	}
	return nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, so a reader never sees half a file.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
