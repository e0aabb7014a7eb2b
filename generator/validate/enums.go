package validate

import (
	"slices"

	"github.com/ordergen/ordergen/runtime"
)

// Enumerations returns the values that Check accepts for each schema key
// whose value is one of a few names, by key, in the order messages list
// them. The policies' come from the runtime's own types: on_exhausted
// takes the names of runtime.ExhaustedPolicies (but drop, which is
// delivery: at-most-once), backlog.when_full those of
// runtime.FullPolicies. The JSON Schema's enumerations are checked against
// these.
func Enumerations() map[string][]string {
	var exhausted, full []string
	for _, p := range runtime.ExhaustedPolicies() {
		if p != runtime.DropEvent {
			exhausted = append(exhausted, p.String())
		}
	}
	for _, p := range runtime.FullPolicies() {
		full = append(full, p.String())
	}
	return map[string][]string{
		"delivery":          {"at-least-once", "at-most-once"},
		"retry.jitter":      {"full", "none"},
		"on_exhausted":      exhausted,
		"backlog.when_full": full,
		"kind":              {"snapshot", "delta"},
		"on_gap":            {"park", "resync"},
		"wire_names":        slices.Clone(wireRuleNames),
	}
}
