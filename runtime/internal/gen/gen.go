// Package gen is for the runtime's own packages: the values that the code
// ordergen generates hands the engine through runtime/genimpl, which the
// engine (package runtime) recognises. It lets those names live in
// genimpl, the package only generated code imports, rather than in the
// runtime's door for handler authors.
package gen

import "fmt"

// ReasonUnimplemented is the skip reason of an event whose handler
// returned runtime.ErrUnimplemented. The engine counts the events skipped
// with it apart (Stats.Unimplemented); genimpl exports it.
const ReasonUnimplemented = "unimplemented"

// Verdicts is the error a batch guard returns to decide the events of its
// batch one by one (genimpl.Verdicts makes it): Verdicts[i] is the verdict
// on the batch's event i.
type Verdicts struct {
	Verdicts []error
}

func (e *Verdicts) Error() string {
	return fmt.Sprintf("ordergen: verdicts on %d events of a batch", len(e.Verdicts))
}
