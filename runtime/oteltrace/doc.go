// Package oteltrace is for services on OpenTelemetry: it traces ordergen's
// events across brokers and the outbox with OpenTelemetry spans and the W3C
// trace context. It is, with runtime/otelmetrics, the only package of
// ordergen that imports OpenTelemetry: the runtime and the transports trace
// through their own small interfaces (runtime.Tracer, transport.Injector,
// transport.Linker), so a service that does not trace has no
// go.opentelemetry.io/otel/trace in its go.mod.
//
// A Tracer does three things:
//
//   - a producer given it (its Trace method: every broker's Producer is a
//     transport.OrderedSink) writes the trace context of each send's
//     context to the message's headers or attributes (traceparent and
//     tracestate); the outbox given it stores the writer's trace context
//     with the row, and its relay sends the row with it;
//   - an engine given it (runtime.Config.Tracer, a generated config's
//     Tracer) makes each attempt a span: a child of the trace context the
//     event's message carried, and linked to it, named "process <engine>",
//     with the entity, key, event, version and attempt as attributes and
//     the outcome (handled, retried, parked, dead-lettered, discarded,
//     withdrawn) in AttrOutcome; a failed attempt's span stays open until
//     its event's fate is known, which it records as an event (a retry, a
//     park, a dead letter); a replayed event's attempt records the replay;
//   - the handler's context carries the attempt's span, so the handler's
//     own spans and sends are its children.
//
// The consumer needs nothing: it reads the trace context of each message
// and its Source hands it to the tracers of its subscribers. Tags are a
// consumer's own: give each consumer's engines (or topic) a Tracer of
// their own; New is cheap, and producers may share any.
//
//	tr := oteltrace.New(otel.GetTracerProvider())
//	producer.Trace(tr)
//	d, err := ledger.NewAccountDispatcher(h, func(c *ledger.AccountConfig) {
//		c.Tracer = tr
//	})
//
// It needs only the OpenTelemetry trace API and the W3C propagator of
// go.opentelemetry.io/otel; the SDK and exporter are the service's.
package oteltrace
