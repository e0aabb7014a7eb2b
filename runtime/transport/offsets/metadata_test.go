package offsets_test

import (
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/ordergen/ordergen/runtime/transport/offsets"
)

// genSpans draws a committed offset and sorted, disjoint, non-touching
// finished spans above it.
func genSpans(t *rapid.T) (int64, []offsets.Span) {
	c := rapid.Int64Range(0, 1<<40).Draw(t, "committed")
	n := rapid.IntRange(0, 40).Draw(t, "spans")
	var spans []offsets.Span
	next := c + 1
	for i := range n {
		from := next + rapid.Int64Range(0, 50).Draw(t, "gap")
		if i > 0 && from == next {
			from++ // spans never touch
		}
		to := from + rapid.Int64Range(1, 300).Draw(t, "len")
		spans = append(spans, offsets.Span{From: from, To: to})
		next = to
	}
	return c, spans
}

func TestMetadataRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c, spans := genSpans(t)
		meta, kept := offsets.Encode(c, spans, 1<<30)
		if kept != len(spans) {
			t.Fatalf("kept %d of %d spans without a bound", kept, len(spans))
		}
		got, err := offsets.Decode(meta, c)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, spans) {
			t.Fatalf("decoded %v, want %v", got, spans)
		}
		if len(spans) > 0 {
			if _, err := offsets.Decode(meta, c+1); err == nil {
				t.Fatal("a map decoded for another committed offset")
			}
		}
	})
}

// A bounded map fits its bound and lists a prefix of the finished spans:
// what it leaves out runs again, nothing unfinished is ever listed.
func TestMetadataBound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c, spans := genSpans(t)
		max := rapid.IntRange(8, 200).Draw(t, "max")
		meta, kept := offsets.Encode(c, spans, max)
		if len(meta) > max {
			t.Fatalf("metadata of %d bytes passes the bound %d", len(meta), max)
		}
		got, err := offsets.Decode(meta, c)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, spans[:kept]) {
			t.Fatalf("decoded %v, want the first %d of %v", got, kept, spans)
		}
	})
}

// The encoder picks the smaller of the bitset and the runs.
func TestMetadataPicksSmaller(t *testing.T) {
	dense := []offsets.Span{} // every other offset finished: the bitset wins
	for o := int64(2); o < 2000; o += 2 {
		dense = append(dense, offsets.Span{From: o, To: o + 1})
	}
	sparse := []offsets.Span{{From: 2, To: 100000}} // one long run: the runs win
	d, _ := offsets.Encode(0, dense, 1<<20)
	s, _ := offsets.Encode(0, sparse, 1<<20)
	if len(d) > 400 {
		t.Errorf("dense map is %d bytes; a bitset of 2000 offsets is 250", len(d))
	}
	if len(s) > 16 {
		t.Errorf("sparse map is %d bytes: %q", len(s), s)
	}
}

func TestMetadataRefusesForeignText(t *testing.T) {
	for _, meta := range []string{"member-1", "EQ", "!!!", "EwAB", strings.Repeat("A", 12)} {
		if spans, err := offsets.Decode(meta, 0); err == nil && len(spans) > 0 {
			t.Errorf("%q decoded to %v", meta, spans)
		}
	}
}
