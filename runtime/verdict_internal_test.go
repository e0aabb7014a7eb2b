package runtime

import "testing"

// The verdicts that finish an event where it runs are handled, skipped
// (with or without SkipApplied) and dropped, and no other: finishesInline
// asks it with one comparison, which holds only while they come first.
func TestFinishesInlineIsHandledSkippedOrDropped(t *testing.T) {
	finishing := map[verdict]bool{verdictHandled: true, verdictSkipped: true, verdictSkippedApplied: true, verdictDropped: true}
	for v := verdictHandled; v <= verdictAbandoned; v++ {
		if got := v.finishesInline(); got != finishing[v] {
			t.Errorf("verdict %d: finishesInline %v, want %v", v, got, finishing[v])
		}
		if got := v.outcome() != 0; got != finishing[v] {
			t.Errorf("verdict %d: outcome %v, but finishes inline: %v", v, v.outcome(), finishing[v])
		}
	}
}
