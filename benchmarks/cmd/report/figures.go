package main

import (
	"slices"
	"sort"
	"strings"
)

// Figures holds one value per benchmark and unit: the median or the least
// disturbed of the runs that -count repeated.
type Figures struct {
	values map[string]map[string]float64
	runs   map[string]int
	stat   Stat
}

// Stat is how Reduce summarises repeated runs.
type Stat string

const (
	// Median keeps the middle value: the usual summary.
	Median Stat = "median"
	// Min keeps the least disturbed run: on a machine shared with other
	// work, which only ever slows a run down, the lowest value of a cost
	// (ns/op, cpu-ns/op) and the highest of a rate (a unit per second,
	// such as records/s).
	Min Stat = "min"
)

// higherIsBetter reports whether unit is a rate, whose least disturbed
// run is its highest value.
func higherIsBetter(unit string) bool { return strings.HasSuffix(unit, "/s") }

// Reduce turns parsed results into figures, summarised by stat.
func Reduce(results []Result, stat Stat) Figures {
	samples := map[string]map[string][]float64{}
	runs := map[string]int{}
	for _, r := range results {
		if samples[r.Name] == nil {
			samples[r.Name] = map[string][]float64{}
		}
		for unit, v := range r.Metrics {
			samples[r.Name][unit] = append(samples[r.Name][unit], v)
		}
		runs[r.Name]++
	}
	f := Figures{values: map[string]map[string]float64{}, runs: runs, stat: stat}
	for name, units := range samples {
		f.values[name] = map[string]float64{}
		for unit, vs := range units {
			switch {
			case stat == Min && higherIsBetter(unit):
				f.values[name][unit] = slices.Max(vs)
			case stat == Min:
				f.values[name][unit] = slices.Min(vs)
			default:
				f.values[name][unit] = median(vs)
			}
		}
	}
	return f
}

// median returns the median of vs, which is not empty.
func median(vs []float64) float64 {
	s := slices.Clone(vs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Get returns the figure of benchmark name in unit.
func (f Figures) Get(name, unit string) (float64, bool) {
	v, ok := f.values[name][unit]
	return v, ok
}

// Stat returns how the figures summarise repeated runs.
func (f Figures) Stat() Stat { return f.stat }

// Runs returns the most runs any benchmark had.
func (f Figures) Runs() int {
	n := 0
	for _, r := range f.runs {
		n = max(n, r)
	}
	return n
}

// Axes returns the second and third name elements of the benchmarks under
// prefix ("BenchmarkDispatch" gives workloads and peers), each in the
// order of known first and then, sorted, any names not in known.
func (f Figures) Axes(prefix string, knownRows, knownCols []string) (rows, cols []string) {
	var seenRows, seenCols []string
	for name := range f.values {
		parts := strings.Split(name, "/")
		if len(parts) != 3 || parts[0] != prefix {
			continue
		}
		seenRows = append(seenRows, parts[1])
		seenCols = append(seenCols, parts[2])
	}
	return ordered(knownRows, seenRows), ordered(knownCols, seenCols)
}

// Names returns the second name elements of the benchmarks under prefix
// ("BenchmarkHotKey" gives peers), known ones first.
func (f Figures) Names(prefix string, known []string) []string {
	var seen []string
	for name := range f.values {
		parts := strings.Split(name, "/")
		if len(parts) == 2 && parts[0] == prefix {
			seen = append(seen, parts[1])
		}
	}
	return ordered(known, seen)
}

// ordered returns the names of known that occur in seen, in known's order,
// then the other names of seen, sorted and without duplicates.
func ordered(known, seen []string) []string {
	var out []string
	for _, k := range known {
		if slices.Contains(seen, k) {
			out = append(out, k)
		}
	}
	var extra []string
	for _, s := range seen {
		if !slices.Contains(known, s) && !slices.Contains(extra, s) {
			extra = append(extra, s)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}
