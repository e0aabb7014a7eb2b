package console

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// The memory the package documentation states: 48 bytes a sample, an
// hour's worth per subscriber, 720 samples (34,560 bytes) at the default
// interval, never more than maxSamples.
func TestRingMemoryIsBoundedAsStated(t *testing.T) {
	if n := unsafe.Sizeof(sample{}); n != sampleBytes {
		t.Fatalf("a sample is %d bytes, the documentation says %d", n, sampleBytes)
	}
	for _, tc := range []struct {
		every time.Duration
		size  int
	}{
		{5 * time.Second, 720}, {time.Second, 3600}, {7 * time.Second, 515}, {time.Millisecond, maxSamples}, {2 * time.Hour, 2},
	} {
		if got := historySize(tc.every); got != tc.size {
			t.Errorf("historySize(%v) = %d, want %d", tc.every, got, tc.size)
		}
	}
	if got := historySize(defaultSample) * sampleBytes; got != 34560 {
		t.Fatalf("a ring at the default interval holds %d bytes, the documentation says 34,560", got)
	}
	h := newHistory(defaultSample)
	id := subscriberID{"Account", "Account"}
	now := time.Unix(1_700_000_000, 0)
	for i := range 2000 {
		h.record(now.Add(time.Duration(i)*defaultSample), map[subscriberID]sample{id: {at: now.Add(time.Duration(i) * defaultSample).UnixNano(), handled: uint64(i)}})
	}
	got := h.of(id)
	if len(got) != 720 || cap(h.rings[id].buf) != 720 || got[0].handled != 2000-720 || got[719].handled != 1999 {
		t.Fatalf("after 2000 samples the ring holds %d (cap %d), from %d to %d; want the last 720 in order",
			len(got), cap(h.rings[id].buf), got[0].handled, got[len(got)-1].handled)
	}
	// A subscriber that is gone is dropped an hour after its last sample.
	later := now.Add(2000*defaultSample + historySpan + time.Second)
	h.record(later, map[subscriberID]sample{{"Order", "Order"}: {at: later.UnixNano()}})
	if h.of(id) != nil || len(h.rings) != 1 {
		t.Fatalf("the ring of a subscriber not seen for an hour is kept: %d rings", len(h.rings))
	}
}

func TestRatesGapsAndResets(t *testing.T) {
	at := func(s int) int64 { return time.Unix(1_700_000_000+int64(s), 0).UnixNano() }
	samples := []sample{
		{at: at(0), handled: 0, pending: 3},
		{at: at(5), handled: 50, pending: 4},
		{at: at(10), handled: 150, pending: 5},
		// a missed sample: no line from 10 to 30
		{at: at(30), handled: 350, pending: 6},
		{at: at(35), handled: 400, pending: 7},
		// the engine restarted: its counter went back
		{at: at(40), handled: 10, pending: 0},
		{at: at(45), handled: 60, pending: 1},
	}
	rate := allSeries[0].pointsOf(samples, 5*time.Second)
	var got []string
	for _, p := range rate {
		got = append(got, fmt.Sprintf("%v%s", p.v, map[bool]string{true: "|", false: ""}[p.gap]))
	}
	if want := "10| 20 10| 10|"; strings.Join(got, " ") != want {
		t.Errorf("handled/s %q, want %q (| starts a line)", strings.Join(got, " "), want)
	}
	backlog := allSeries[2].pointsOf(samples, 5*time.Second)
	got = got[:0]
	for _, p := range backlog {
		got = append(got, fmt.Sprintf("%v%s", p.v, map[bool]string{true: "|", false: ""}[p.gap]))
	}
	if want := "3| 4 5 6| 7 0 1"; strings.Join(got, " ") != want {
		t.Errorf("backlog %q, want %q", strings.Join(got, " "), want)
	}
}

func TestDrawnChart(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	var samples []sample
	for i := range 720 {
		samples = append(samples, sample{at: start.Add(time.Duration(i) * 5 * time.Second).UnixNano(), pending: int64(i % 37), oldest: int64(time.Duration(i) * time.Millisecond)})
	}
	now := start.Add(720 * 5 * time.Second)
	backlog := allSeries[2].draw(samples, 5*time.Second, now, smallChart)
	if backlog.Points != 720 || backlog.Now != "16" || backlog.Top != "50" || backlog.Span != "1h00m" || !backlog.Dot {
		t.Fatalf("backlog chart: %d points, now %q, top %q, span %q", backlog.Points, backlog.Now, backlog.Top, backlog.Span)
	}
	// An hour in 200 units: a point per unit at most, one line.
	if m, l := strings.Count(backlog.Line, "M"), strings.Count(backlog.Line, "L"); m != 1 || l > smallChart[0] || l < smallChart[0]/2 {
		t.Fatalf("the line has %d moves and %d segments", m, l)
	}
	for _, coord := range strings.FieldsFunc(backlog.Line, func(r rune) bool { return r == 'M' || r == 'L' || r == ' ' }) {
		var v float64
		if _, err := fmt.Sscan(coord, &v); err != nil || v < 0 || v > float64(smallChart[0]) {
			t.Fatalf("a coordinate %q outside the drawing", coord)
		}
	}
	oldest := allSeries[3].draw(samples, 5*time.Second, now, largeChart)
	if oldest.Now != "719ms" || oldest.Top != "1s" || !strings.Contains(oldest.Label, "oldest over the last 1h00m") {
		t.Fatalf("oldest chart: now %q, top %q, label %q", oldest.Now, oldest.Top, oldest.Label)
	}
	// Two samples a second apart fill the chart over ten intervals.
	young := allSeries[2].draw(samples[:2], 5*time.Second, start.Add(6*time.Second), smallChart)
	if young.Points != 2 || young.Span != "50s" {
		t.Fatalf("a young history: %d points over %q", young.Points, young.Span)
	}
	if empty := allSeries[0].draw(nil, 5*time.Second, now, smallChart); empty.Points != 0 || empty.Dot || empty.Line != "" || empty.Now != "–" {
		t.Fatalf("no samples: %+v", empty)
	}
}
