package genimpl

import (
	"strconv"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/internal/gen"
)

// ReasonUnimplemented is the skip reason of an event whose handler returned
// runtime.ErrUnimplemented: the guards acknowledge it as if applied (its
// version and state advance) and skip it with this reason, the value of
// the ordergen.skip.reason attribute of the events it counts. The engine
// counts them apart (runtime.Stats.Unimplemented).
const ReasonUnimplemented = gen.ReasonUnimplemented

// Verdicts returns the error a batch guard returns to decide the events of
// its batch one by one rather than as a whole: verdicts[i] is the verdict
// on events[i], nil when it was handled, a runtime.Skip (or SkipApplied)
// when it was skipped or a runtime.Hold when it waits for a gap (it joins
// its key's resequencer). The events after the last verdict were not
// decided: they go back to the front of their lane, in order, and come
// first in the key's next batch; this is how a guard ends a batch where it
// must not go on (a gap). At least one event must be decided, and any
// verdict other than nil, a Skip or a Hold fails the whole batch
// permanently. A group commit's Result.Verdict carries it too.
func Verdicts(verdicts []error) error { return &gen.Verdicts{Verdicts: verdicts} }

// CheckVersion is the version guard's decision for an event of version when
// stored is the key's last applied version: nil to apply it (the next
// version, or a snapshot over a gap), a Skip for a duplicate or stale one,
// and a Hold for a delta that arrived before the versions it follows.
func CheckVersion(version, stored uint64, snapshot bool) error {
	switch {
	case version <= stored:
		return runtime.Skip("duplicate or stale version")
	case version > stored+1 && !snapshot:
		return runtime.Hold("version gap: waiting for version " + strconv.FormatUint(stored+1, 10))
	}
	return nil
}
