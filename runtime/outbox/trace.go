package outbox

import (
	"context"

	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/transport"
)

// traced returns ctx carrying the trace context ev's writer committed it
// under (sqlstore.Store.Trace), which the sink writes to the message
// (transport.WithTrace) in place of the relay's own: the handlers' spans
// join the writer's trace, however long after the commit and whichever
// relay sends the row.
func traced(ctx context.Context, ev sqlstore.OutboxEvent) context.Context {
	if ev.TraceParent == "" {
		return ctx
	}
	return transport.WithTrace(ctx, transport.Trace{Parent: ev.TraceParent, State: ev.TraceState})
}
