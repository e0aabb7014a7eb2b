package validate

import (
	"slices"
	"testing"

	"github.com/ordergen/ordergen/generator/schema"
	"github.com/ordergen/ordergen/runtime"
)

// TestEveryPolicyKeyIsRead checks that validate reads every policy key the
// loader accepts, in the loader's order: a key added to one and not the
// other would be loaded and ignored.
func TestEveryPolicyKeyIsRead(t *testing.T) {
	var read []string
	for _, r := range policyReaders {
		read = append(read, r.key)
	}
	if want := schema.PolicyKeys(); !slices.Equal(read, want) {
		t.Errorf("validate reads %v,\nthe loader accepts %v", read, want)
	}
}

// TestPolicyEnumerationsAreTheRuntimes checks that the names a schema may
// give on_exhausted and backlog.when_full are those of the runtime's
// policy types, and that each resolves to the value of that name.
func TestPolicyEnumerationsAreTheRuntimes(t *testing.T) {
	enums := Enumerations()
	if got, want := enums["on_exhausted"], []string{runtime.ParkKey.String(), runtime.SendToDeadLetter.String()}; !slices.Equal(got, want) {
		t.Errorf("on_exhausted: %v, want %v", got, want)
	}
	for _, p := range runtime.FullPolicies() {
		if !slices.Contains(enums["backlog.when_full"], p.String()) {
			t.Errorf("backlog.when_full does not accept %s", p)
		}
		if got := byName(runtime.FullPolicies(), p.String()); got != p {
			t.Errorf("%s resolves to %v", p, got)
		}
	}
	if len(enums["backlog.when_full"]) != len(runtime.FullPolicies()) {
		t.Errorf("backlog.when_full accepts %v", enums["backlog.when_full"])
	}
}
