package genimpl_test

import (
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/genimpl"
)

func TestCheckVersion(t *testing.T) {
	for _, tc := range []struct {
		version, stored uint64
		snapshot        bool
		want            string // "apply", or the skip or hold reason
	}{
		{1, 0, false, "apply"},
		{5, 4, false, "apply"},
		{4, 4, false, "skip: duplicate or stale version"},
		{3, 4, true, "skip: duplicate or stale version"},
		{6, 4, false, "hold: version gap: waiting for version 5"},
		{6, 4, true, "apply"},
	} {
		err := genimpl.CheckVersion(tc.version, tc.stored, tc.snapshot)
		got := "apply"
		if reason, ok := runtime.IsSkip(err); ok {
			got = "skip: " + reason
		} else if reason, ok := runtime.IsHold(err); ok {
			got = "hold: " + reason
		} else if err != nil {
			got = "error: " + err.Error()
		}
		if got != tc.want {
			t.Errorf("version %d over %d (snapshot %v): %s, want %s", tc.version, tc.stored, tc.snapshot, got, tc.want)
		}
	}
}
