package offsets_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/ordergen/ordergen/runtime/transport/offsets"
)

// The tracker against a model: records taken in offset order (with gaps)
// and finished in any order; the commit point is the lowest unfinished
// offset and the spans are exactly the finished offsets above it.
func TestTrackerModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var tr offsets.Tracker
		start := rapid.Int64Range(0, 1000).Draw(t, "start")
		tr.Start(start, nil)
		next := start
		unfinished := map[int64]bool{}
		var taken []int64
		for range rapid.IntRange(1, 300).Draw(t, "steps") {
			if len(taken) == 0 || rapid.Bool().Draw(t, "take") {
				next += rapid.Int64Range(0, 3).Draw(t, "gap")
				tr.Add(next, 0)
				unfinished[next] = true
				taken = append(taken, next)
				next++
				continue
			}
			o := rapid.SampledFrom(taken).Draw(t, "finish")
			tr.Finish(o)
			delete(unfinished, o)
		}
		base, spans := tr.CommitPoint()
		wantBase := next
		for o := range unfinished {
			wantBase = min(wantBase, o)
		}
		if base != wantBase {
			t.Fatalf("commit point %d, want %d", base, wantBase)
		}
		finished := func(o int64) bool {
			for _, s := range spans {
				if o >= s.From && o < s.To {
					return true
				}
			}
			return false
		}
		for o := base + 1; o < next; o++ {
			if finished(o) == unfinished[o] {
				t.Fatalf("offset %d: listed finished %v, unfinished %v", o, finished(o), unfinished[o])
			}
		}
		if n := len(spans); n > 0 && spans[n-1].To > next {
			t.Fatalf("spans %v reach past %d", spans, next)
		}
	})
}

// The previous owner's finished offsets are skipped and kept in the
// metadata until consumed again.
func TestTrackerInherited(t *testing.T) {
	var tr offsets.Tracker
	tr.Start(10, []offsets.Span{{From: 11, To: 15}, {From: 20, To: 22}})
	if !tr.InheritedDone(12) || tr.InheritedDone(10) || tr.InheritedDone(15) {
		t.Fatal("inherited spans misread")
	}
	base, spans := tr.CommitPoint()
	if base != 10 || len(spans) != 2 {
		t.Fatalf("before consuming: %d %v", base, spans)
	}
	tr.Add(10, 0)
	for o := int64(11); o < 15; o++ {
		tr.Skip(o)
	}
	base, spans = tr.CommitPoint()
	if base != 10 || len(spans) != 2 || spans[0] != (offsets.Span{From: 11, To: 15}) || spans[1] != (offsets.Span{From: 20, To: 22}) {
		t.Fatalf("after skipping: %d %v", base, spans)
	}
	tr.Finish(10)
	base, spans = tr.CommitPoint()
	if base != 15 || len(spans) != 1 {
		t.Fatalf("after finishing: %d %v", base, spans)
	}
	if !tr.Seen(14) || tr.Seen(15) {
		t.Fatal("seen misread")
	}
}

// fits bounds the metadata however the taken records finish.
func TestTrackerFits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var tr offsets.Tracker
		tr.Start(0, nil)
		max := rapid.IntRange(16, 120).Draw(t, "max")
		var taken []int64
		next := int64(0)
		tr.Measure()
		for tr.Fits(next, max) && len(taken) < 5000 {
			tr.Add(next, 0)
			taken = append(taken, next)
			next += rapid.Int64Range(1, 3).Draw(t, "step")
		}
		// Finish any subset: the map still fits.
		for _, o := range taken {
			if rapid.Bool().Draw(t, "finish") {
				tr.Finish(o)
			}
		}
		base, spans := tr.CommitPoint()
		meta, kept := offsets.Encode(base, spans, 1<<30)
		if len(meta) > max || kept != len(spans) {
			t.Fatalf("metadata %d bytes after fits allowed %d records; bound %d", len(meta), len(taken), max)
		}
	})
}
