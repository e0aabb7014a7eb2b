package runtime

import "errors"

// ErrUnimplemented is what the methods of a generated handler base (such as
// UnimplementedAccountHandler, which a handler embeds to keep compiling
// when the schema gains events) return for an event the handler does not
// implement. A generated guard then acknowledges the event as if it had
// been applied: the key's version and state advance, so no gap is left
// behind, and the event is skipped with the reason "unimplemented", so it
// counts as skipped (Stats.Unimplemented). A handler may return it,
// wrapped or not, for an event it deliberately ignores. Only generated
// guards know it: to an Engine it is an error like any other.
var ErrUnimplemented = errors.New("ordergen: event not implemented")
