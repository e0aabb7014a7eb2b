package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Meta describes the run behind the figures.
type Meta struct {
	CPU          string   // CPU model
	Cores        int      // logical CPUs
	Go           string   // Go version and GOOS/GOARCH
	Source       string   // the ordergen commit measured, or ""
	Date         string   // YYYY-MM-DD, UTC
	Load         string   // load averages before the run, or ""
	Report       string   // the report command line, from the benchmarks module
	Commands     []string // the commands that produced the output, from the benchmarks module
	Workers      int      // the peers' concurrency
	Keys         int      // keys per workload
	HotKeyEvents int      // events per hot-key scenario
	KafkaRecords int      // records on the Kafka no-op benchmark's topic
	Partitions   int      // that topic's partitions
}

// Suite names the benchmarks a report covers, in report order.
type Suite struct {
	Workloads []string // BenchmarkDispatch's workloads
	Peers     []string // the peers
	Reference string   // the peer the ratios compare ordergen with first (the pool)
	Striped   string   // the peer the ratios compare ordergen with second
	Subject   string   // ordergen: runtime.New
	Generated string   // the generated dispatcher, compared with Subject
	// Policies is the engine with the generated dispatcher's policies and
	// guard written by hand, which Generated is compared with too: the
	// generated code's own cost.
	Policies string
}

const (
	dispatchBench = "BenchmarkDispatch"
	hotKeyBench   = "BenchmarkHotKey"
	kafkaBench    = "BenchmarkKafkaNoop"
)

// WriteMarkdown writes the report: the run's description, the dispatch
// table with the ratios, the chart, the same table in CPU time, the hot-key
// table, the Kafka figures and the raw output.
func WriteMarkdown(w io.Writer, m Meta, s Suite, f Figures, raw string) error {
	var b strings.Builder
	b.WriteString("# Benchmarks\n\n")
	b.WriteString("<!-- Written by `go run ./cmd/report` in benchmarks/; do not edit. -->\n\n")
	fmt.Fprintf(&b, "The ordergen runtime side by side with its peers, in one process, on the same workloads "+
		"(see [benchmarks/README.md](../benchmarks/README.md)). Every peer runs at most %d handlers at once. "+
		"%s Timings on a small shared machine move from run to run: compare peers within one report, "+
		"and changes with `-count` and benchstat.\n\n", m.Workers, runsSentence(f.Runs(), f.Stat()))
	b.WriteString("| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| Machine | %s, %d cores |\n", m.CPU, m.Cores)
	fmt.Fprintf(&b, "| Go | %s |\n", m.Go)
	fmt.Fprintf(&b, "| Date | %s |\n", m.Date)
	if m.Source != "" {
		fmt.Fprintf(&b, "| ordergen | %s |\n", m.Source)
	}
	if m.Load != "" {
		fmt.Fprintf(&b, "| Load average before the run | %s |\n", m.Load)
	}
	if m.Report != "" {
		fmt.Fprintf(&b, "\nWritten in `benchmarks/` by `%s`, which ran, in rounds that interleave every peer "+
			"with the others:\n\n", m.Report)
	} else {
		b.WriteString("\nCommands, in `benchmarks/`:\n\n")
	}
	for _, c := range m.Commands {
		fmt.Fprintf(&b, "    %s\n", c)
	}

	rows, cols := f.Axes(dispatchBench, s.Workloads, s.Peers)
	b.WriteString("\n## Dispatch\n\n")
	fmt.Fprintf(&b, "ns/event, with allocs/event in parentheses; lower is better. One producer goroutine "+
		"submits the events over %s keys and waits until all are handled; uniform workloads draw keys "+
		"uniformly, skewed ones give one key half of the events; the handler does nothing (noop) or "+
		"about 1 µs of CPU work (1us); in -4sub workloads 4 goroutines submit, each the events of its own "+
		"keys. `%s` is `runtime.New`, the bare engine; `%s` is what users run: the dispatcher ordergen "+
		"generates (benchmarks/schema.yaml), with its version guard on the in-memory store and the "+
		"schema's policies, a 5s timeout per attempt included; `%s` is the bare engine with the same "+
		"policies and a version guard on runtime.MemoryVersionStore written by hand, so %s/%s is the "+
		"generated code's own cost. `%s` does not keep per-key order: it is "+
		"the ceiling. The ratios divide the first peer's ns/event by the second's.\n\n",
		group(int64(m.Keys)), s.Subject, s.Generated, s.Policies, s.Generated, s.Policies, s.Reference)
	ratios := [][2]string{{s.Subject, s.Reference}, {s.Subject, s.Striped}, {s.Generated, s.Subject}, {s.Generated, s.Policies}}
	b.WriteString("| workload |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s |", c)
	}
	for _, r := range ratios {
		fmt.Fprintf(&b, " %s/%s |", r[0], r[1])
	}
	b.WriteString("\n|---|")
	for range len(cols) + len(ratios) {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s |", r)
		for _, c := range cols {
			name := dispatchBench + "/" + r + "/" + c
			ns, ok := f.Get(name, "ns/op")
			if !ok {
				b.WriteString(" – |")
				continue
			}
			allocs, _ := f.Get(name, "allocs/op")
			fmt.Fprintf(&b, " %s (%s) |", formatNs(ns), formatCount(allocs))
		}
		for _, q := range ratios {
			fmt.Fprintf(&b, " %s |", ratio(f, dispatchBench+"/"+r+"/"+q[0], dispatchBench+"/"+r+"/"+q[1], "ns/op"))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n![ns/event per workload and peer](benchmarks.svg)\n")
	writeCPU(&b, s, f, rows, cols, ratios)

	peers := f.Names(hotKeyBench, s.Peers)
	b.WriteString("\n## Hot key\n\n")
	fmt.Fprintf(&b, "One scenario: %s events over %s keys, half of them on one key, each taking about "+
		"1 µs of CPU, submitted as fast as the peer takes them. *Last cold event* is when the last event "+
		"of any other key completed, counted from the first submit: how long the hot key held the others "+
		"back. *All events* is when the whole scenario completed. Lower is better.",
		group(int64(m.HotKeyEvents)), group(int64(m.Keys)))
	if m.Cores <= 2 {
		b.WriteString(" The handlers are CPU-bound, so the hot key's serial half of the work weighs as much " +
			"as the whole load spread over two cores: on this machine even ideal isolation cannot finish " +
			"the cold keys much before the hot one.")
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "| peer | last cold event | all events | last cold, vs %s |\n|---|---:|---:|---:|\n", s.Striped)
	for _, p := range peers {
		name := hotKeyBench + "/" + p
		cold, okCold := f.Get(name, "ns/last-cold")
		all, okAll := f.Get(name, "ns/op")
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", p, formatMs(cold, okCold), formatMs(all, okAll),
			ratio(f, name, hotKeyBench+"/"+s.Striped, "ns/last-cold"))
	}
	fmt.Fprintf(&b, "\nLast cold event: %s/%s %s, %s/%s %s, %s/%s %s.\n",
		s.Subject, s.Striped, ratio(f, hotKeyBench+"/"+s.Subject, hotKeyBench+"/"+s.Striped, "ns/last-cold"),
		s.Generated, s.Subject, ratio(f, hotKeyBench+"/"+s.Generated, hotKeyBench+"/"+s.Subject, "ns/last-cold"),
		s.Generated, s.Policies, ratio(f, hotKeyBench+"/"+s.Generated, hotKeyBench+"/"+s.Policies, "ns/last-cold"))

	writeKafka(&b, m, f)

	b.WriteString("\n## Raw output\n\n```\n")
	b.WriteString(strings.TrimRight(raw, "\n"))
	b.WriteString("\n```\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write markdown: %w", err)
	}
	return nil
}

// cpuUnit is the dispatch benchmarks' CPU time per event: the whole
// process's, submitters and peer together.
const cpuUnit = "cpu-ns/op"

// writeCPU writes the dispatch table again in CPU time per event, with the
// same ratios, when the output has it. Wall time alone flatters a peer that
// leaves a core idle and blames one that another process's work delayed;
// the gates of the engine (issue 39) hold in both units.
func writeCPU(b *strings.Builder, s Suite, f Figures, rows, cols []string, ratios [][2]string) {
	var found bool
	for _, r := range rows {
		for _, c := range cols {
			if _, ok := f.Get(dispatchBench+"/"+r+"/"+c, cpuUnit); ok {
				found = true
			}
		}
	}
	if !found {
		return
	}
	b.WriteString("\n### CPU per event\n\n")
	fmt.Fprintf(b, "cpu-ns/event: the CPU time of the whole process (submitters and peer) over the same span, "+
		"per event; lower is better. It counts what a peer costs in all, including the core time a "+
		"peer spends spinning or waking, and other work on a shared machine disturbs it less than "+
		"ns/event. The ratios divide the first peer's cpu-ns/event by the second's; `%s` is the "+
		"ceiling here too.\n\n", s.Reference)
	b.WriteString("| workload |")
	for _, c := range cols {
		fmt.Fprintf(b, " %s |", c)
	}
	for _, r := range ratios {
		fmt.Fprintf(b, " %s/%s |", r[0], r[1])
	}
	b.WriteString("\n|---|")
	for range len(cols) + len(ratios) {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s |", r)
		for _, c := range cols {
			if v, ok := f.Get(dispatchBench+"/"+r+"/"+c, cpuUnit); ok {
				fmt.Fprintf(b, " %s |", formatNs(v))
			} else {
				b.WriteString(" – |")
			}
		}
		for _, q := range ratios {
			fmt.Fprintf(b, " %s |", ratio(f, dispatchBench+"/"+r+"/"+q[0], dispatchBench+"/"+r+"/"+q[1], cpuUnit))
		}
		b.WriteString("\n")
	}
}

// writeKafka writes the Kafka no-op section, when the output has it.
func writeKafka(b *strings.Builder, m Meta, f Figures) {
	consumer, okC := f.Get(kafkaBench, "consumer-rec/s")
	plain, okP := f.Get(kafkaBench, "plain-rec/s")
	if !okC && !okP {
		return
	}
	// The figures' ratio, as for the other tables (not the benchmark's own
	// per-run ratio): with -stat min, each consumer's least disturbed run.
	var r float64
	okR := okC && okP && plain > 0
	if okR {
		r = consumer / plain
	}
	b.WriteString("\n## Kafka end to end\n\n")
	fmt.Fprintf(b, "One topic of %s records (%d partitions, %s keys) on an in-process kfake cluster, consumed "+
		"in the same run, each time in a new group, by runtime/kafka's consumer feeding the generated dispatcher "+
		"and by a plain franz-go poll loop in one goroutine (poll, decode with the same codec, call the handler). "+
		"The handler does nothing. Records per second from the first event's start to the last one's end; "+
		"higher is better. *Ratio* is the consumer's records/s over the poll loop's, of the figures shown.\n\n",
		group(int64(m.KafkaRecords)), m.Partitions, group(int64(m.Keys)))
	b.WriteString("| consumer + generated dispatcher | plain poll loop | ratio |\n|---:|---:|---:|\n")
	fmt.Fprintf(b, "| %s | %s | %s |\n", formatRate(consumer, okC), formatRate(plain, okP), formatRatio(r, okR))
}

// formatRate formats records per second, or a dash when missing.
func formatRate(v float64, ok bool) string {
	if !ok {
		return "–"
	}
	return group(int64(v+0.5)) + " records/s"
}

// formatRatio formats a ratio that a benchmark reported, or a dash.
func formatRatio(v float64, ok bool) string {
	if !ok {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "×"
}

// runsSentence says how many runs the figures summarise.
func runsSentence(runs int, stat Stat) string {
	switch {
	case runs <= 1:
		return "Figures are from one run of each benchmark."
	case stat == Min:
		return fmt.Sprintf("Figures are the lowest of %d runs of each benchmark (each figure on its own: "+
			"the least disturbed run).", runs)
	default:
		return fmt.Sprintf("Figures are the medians of %d runs of each benchmark.", runs)
	}
}

// ratio formats the ratio of two benchmarks' figures in unit, or a dash
// when either is missing.
func ratio(f Figures, num, den, unit string) string {
	a, okA := f.Get(num, unit)
	d, okD := f.Get(den, unit)
	if !okA || !okD || d == 0 {
		return "–"
	}
	return strconv.FormatFloat(a/d, 'f', 2, 64) + "×"
}

// formatNs formats nanoseconds with about three significant digits.
func formatNs(ns float64) string {
	switch {
	case ns >= 100:
		return group(int64(ns + 0.5))
	case ns >= 10:
		return strconv.FormatFloat(ns, 'f', 1, 64)
	default:
		return strconv.FormatFloat(ns, 'f', 2, 64)
	}
}

// formatMs formats nanoseconds as milliseconds, or a dash when missing.
func formatMs(ns float64, ok bool) string {
	if !ok {
		return "–"
	}
	ms := ns / 1e6
	if ms >= 100 {
		return group(int64(ms+0.5)) + " ms"
	}
	return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
}

// formatCount formats a count that go test may print with decimals.
func formatCount(v float64) string {
	if v == float64(int64(v)) {
		return group(int64(v))
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// group writes n with a comma between groups of three digits.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
