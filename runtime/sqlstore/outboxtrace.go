package sqlstore

import "context"

// Tracing through the outbox: AppendOutbox stores the W3C trace context of
// the writer's context with the row (ordergen_outbox's trace_parent and
// trace_state, schema version 3), and the relay sends the row under it
// (runtime/outbox), so that the link from the writer's transaction to the
// handlers survives the commit and a crash of the relay.

// TraceFunc returns the W3C trace context (traceparent, tracestate) of
// ctx's span, "" for none: runtime/oteltrace's Tracer.W3C.
type TraceFunc func(ctx context.Context) (parent, state string)

// Trace makes AppendOutbox store the trace context f gives of the writer's
// context with each row. Call it before the first append. Nil: none is
// stored.
func (s *Store) Trace(f TraceFunc) { s.trace = f }

// traceOf returns the trace context to store for a row appended under ctx.
func (s *Store) traceOf(ctx context.Context) (parent, state string) {
	if s.trace == nil {
		return "", ""
	}
	parent, state = s.trace(ctx)
	if parent == "" {
		return "", ""
	}
	return parent, state
}

// outboxTraceMigration is schema version 3: the trace context of each
// outbox row. Rows written before it have none (the columns' default).
var outboxTraceMigration = []string{
	`ALTER TABLE ordergen_outbox ADD COLUMN trace_parent TEXT NOT NULL DEFAULT ''`,
	`ALTER TABLE ordergen_outbox ADD COLUMN trace_state TEXT NOT NULL DEFAULT ''`,
}
