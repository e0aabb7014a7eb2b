// Package otelmetrics is for services on OpenTelemetry: it records the metrics
// of ordergen's runtime, and of its transports, through OpenTelemetry. It is,
// with runtime/oteltrace, the only package of ordergen that imports
// OpenTelemetry: the runtime records through its own small interface
// (meter.Provider), so a service that records no metrics has no
// OpenTelemetry module in its go.mod, as franz-go's kotel plugin keeps
// OpenTelemetry out of franz-go.
//
// Give a generated dispatcher (or a runtime.Config) the provider it makes
// from yours:
//
//	d, err := ledger.NewAccountDispatcher(h, func(c *ledger.AccountConfig) {
//		c.MeterProvider = otelmetrics.NewMeterProvider(otel.GetMeterProvider())
//	})
//
// It needs only the OpenTelemetry metric API; the SDK and exporter are the
// service's. The instruments keep the names and attributes the runtime
// documents (meter.MetricEvents and the rest), and the instrumentation
// scope is the import path of the recording package.
//
// Recording allocates nothing: the runtime prepares its attribute sets
// once (meter.Meter.Attributes), and this package turns each into the
// OpenTelemetry measurement options it passes as they are.
package otelmetrics
