package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
)

func sample(t *testing.T) (Output, string) {
	t.Helper()
	raw, err := os.ReadFile("testdata/sample.txt")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Parse(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return out, string(raw)
}

func TestParse(t *testing.T) {
	out, _ := sample(t)
	if got := len(out.Results); got != 18 {
		t.Fatalf("%d results, want 18", got)
	}
	r := out.Results[0]
	if r.Name != "BenchmarkDispatch/uniform-noop/ordergen" || r.Procs != 2 || r.Iterations != 1000000 {
		t.Errorf("first result %+v", r)
	}
	if r.Metrics["ns/op"] != 660.4 || r.Metrics["B/op"] != 56 || r.Metrics["allocs/op"] != 0 {
		t.Errorf("first result's metrics %v", r.Metrics)
	}
	hot := out.Results[11]
	if hot.Name != "BenchmarkHotKey/ordergen" || hot.Metrics["ns/last-cold"] != 24071311 {
		t.Errorf("hot-key result %+v", hot)
	}
	if out.Header["cpu"] != "Example CPU @ 3.00GHz" || out.Header["goos"] != "linux" {
		t.Errorf("header %v", out.Header)
	}
}

func TestParseRejectsValueWithoutUnit(t *testing.T) {
	_, err := Parse(strings.NewReader("BenchmarkX-2 10 12.5 ns/op 3\n"))
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("err = %v, want a line 1 error", err)
	}
}

func TestSplitProcs(t *testing.T) {
	for in, want := range map[string]struct {
		name  string
		procs int
	}{
		"BenchmarkX/skewed-1us/pool-8": {"BenchmarkX/skewed-1us/pool", 8},
		"BenchmarkX/skewed-1us":        {"BenchmarkX/skewed-1us", 1},
		"BenchmarkX":                   {"BenchmarkX", 1},
	} {
		if name, procs := splitProcs(in); name != want.name || procs != want.procs {
			t.Errorf("splitProcs(%q) = %q, %d", in, name, procs)
		}
	}
}

func TestReduceTakesMedians(t *testing.T) {
	out, _ := sample(t)
	f := Reduce(out.Results, Median)
	if v, _ := f.Get("BenchmarkDispatch/uniform-noop/ordergen", "ns/op"); v != 660.4 {
		t.Errorf("median = %v, want 660.4", v)
	}
	if f.Runs() != 3 {
		t.Errorf("runs = %d, want 3", f.Runs())
	}
	if v, _ := Reduce(out.Results, Min).Get("BenchmarkDispatch/uniform-noop/ordergen", "ns/op"); v != 640 {
		t.Errorf("min = %v, want 640", v)
	}
}

// With -stat min, a rate's least disturbed run is its highest: the Kafka
// section shows each consumer's best run and their ratio, not the lowest
// records/s of each (the most disturbed runs) and the lowest ratio.
func TestLeastDisturbedRateIsTheHighest(t *testing.T) {
	out, raw := sample(t)
	f := Reduce(out.Results, Min)
	if v, _ := f.Get("BenchmarkKafkaNoop", "consumer-rec/s"); v != 180000 {
		t.Errorf("least disturbed consumer-rec/s = %v, want the highest, 180000", v)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, testMeta(), defaultSuite(), f, raw); err != nil {
		t.Fatal(err)
	}
	if want := "| 180,000 records/s | 500,000 records/s | 0.36× |"; !strings.Contains(b.String(), want) {
		t.Errorf("the Kafka section lacks %q:\n%s", want, b.String())
	}
}

func testMeta() Meta {
	return Meta{CPU: "Example CPU", Cores: 2, Go: "go1.26.0 linux/amd64", Date: "2026-01-02",
		Commands: []string{"go test -bench ."}, Workers: 8, Keys: 10000, HotKeyEvents: 100000,
		KafkaRecords: 100000, Partitions: 12}
}

func TestMarkdown(t *testing.T) {
	out, raw := sample(t)
	var b bytes.Buffer
	if err := WriteMarkdown(&b, testMeta(), defaultSuite(), Reduce(out.Results, Median), raw); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| Machine | Example CPU, 2 cores |",
		"| workload | ordergen | generated | policies | pool | striped | chained | watermill | ordergen/pool | ordergen/striped | generated/ordergen | generated/policies |",
		"| uniform-noop | 660 (0) | 1,321 (5) | 991 (0) | 48.3 (0) | 100 (0) | 1,325 (2) | 32,091 (46) | 13.68× | 6.60× | 2.00× | 1.33× |",
		"| skewed-1us | 1,954 (0) | – | – | – | 2,534 (0) | – | – | – | 0.77× | – | – |",
		"| ordergen | 24.1 ms | 68.0 ms | 0.19× |",
		"| generated | 36.1 ms | 70.1 ms | 0.29× |",
		"| policies | 30.0 ms | 69.0 ms | 0.24× |",
		"Last cold event: ordergen/striped 0.19×, generated/ordergen 1.50×, generated/policies 1.20×.",
		"![ns/event per workload and peer](benchmarks.svg)",
		"### CPU per event",
		"| uniform-noop | 800 | – | 1,200 | 60.0 | 120 | – | – | 13.33× | 6.67× | – | – |",
		"| skewed-1us | – | – | – | – | – | – | – | – | – | – | – |",
		"## Kafka end to end",
		"| 163,359 records/s | 444,750 records/s | 0.37× |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestSVGIsWellFormedAndDeterministic(t *testing.T) {
	out, _ := sample(t)
	f := Reduce(out.Results, Median)
	var a, b bytes.Buffer
	if err := WriteSVG(&a, defaultSuite(), f); err != nil {
		t.Fatal(err)
	}
	if err := WriteSVG(&b, defaultSuite(), f); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Error("two renders of the same figures differ")
	}
	dec := xml.NewDecoder(bytes.NewReader(a.Bytes()))
	bars := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "title" {
			bars++
		}
	}
	if bars != 9 { // 7 uniform-noop peers + 2 skewed-1us peers
		t.Errorf("%d bars, want 9", bars)
	}
	for _, want := range []string{"ns/event (log scale)", ">uniform-noop<", ">watermill<"} {
		if !strings.Contains(a.String(), want) {
			t.Errorf("svg lacks %q", want)
		}
	}
}

// TestMarkdownWithoutKafka leaves the Kafka section out when the output
// has no BenchmarkKafkaNoop.
func TestMarkdownWithoutKafka(t *testing.T) {
	out, raw := sample(t)
	var results []Result
	for _, r := range out.Results {
		if r.Name != kafkaBench {
			results = append(results, r)
		}
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, testMeta(), defaultSuite(), Reduce(results, Median), raw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "## Kafka") {
		t.Error("a Kafka section without Kafka figures")
	}
}

// TestRoundsInterleave checks the commands: one build, then each round
// runs every benchmark once, so that the peers' runs interleave.
func TestRoundsInterleave(t *testing.T) {
	o, err := parseFlags([]string{"-count", "7", "-benchtime", "1000x"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	round := o.round("bin")
	benches := map[string]bool{}
	for _, c := range round {
		if c[0] != "bin" || !slices.Contains(c, "-test.count=1") {
			t.Errorf("command %q does not run the binary once", c)
		}
		i := slices.Index(c, "-test.bench")
		if i < 0 {
			t.Fatalf("command %q runs no benchmark", c)
		}
		benches[c[i+1]] = true
	}
	for _, want := range []string{"^" + dispatchBench + "$", "^" + hotKeyBench + "$", "^" + kafkaBench + "$"} {
		if !benches[want] {
			t.Errorf("a round does not run %s", want)
		}
	}
	if !slices.Contains(round[0], "-test.benchtime=1000x") {
		t.Errorf("dispatch command %q ignores -benchtime", round[0])
	}
	lines := o.commands()
	if len(lines) != 2+len(round)+1 || !strings.HasPrefix(lines[0], "go test -c -o benchmarks.test") ||
		lines[1] != "for round in $(seq 7); do" || lines[len(lines)-1] != "done" {
		t.Errorf("commands:\n%s", strings.Join(lines, "\n"))
	}
}

func TestDefaultCountIsFive(t *testing.T) {
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.count < 5 {
		t.Errorf("default -count %d, want at least 5 rounds for a median", o.count)
	}
}

func TestGroup(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1500: "-1,500"} {
		if got := group(in); got != want {
			t.Errorf("group(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestReportFromInput(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	if err := run(t.Context(), []string{"-input", "testdata/sample.txt", "-out", dir}, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, name := range []string{"benchmarks.md", "benchmarks.svg"} {
		if fi, err := os.Stat(dir + "/" + name); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestMarkdownWithoutCPU leaves the CPU table out when the output has no
// cpu-ns/op (output saved before the benchmarks reported it).
func TestMarkdownWithoutCPU(t *testing.T) {
	out, raw := sample(t)
	for _, r := range out.Results {
		delete(r.Metrics, cpuUnit)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, testMeta(), defaultSuite(), Reduce(out.Results, Median), raw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "CPU per event") {
		t.Error("a CPU table without CPU figures")
	}
}
