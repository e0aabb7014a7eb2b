// Package meter is for whoever connects ordergen to a metrics library, and
// for transports that record metrics: it holds the metrics interface that
// the engine and the transports record through, and the names of what they
// record.
//
// The runtime imports no metrics library. An adapter implements [Provider]
// for one (runtime/otelmetrics for OpenTelemetry; runtime/metricstest keeps
// measurements in memory for tests), so that a service that records no
// metrics builds none, and a service that does picks the library. A handler
// author only passes a Provider to runtime.Config.MeterProvider (or to a
// generated dispatcher's config).
//
// The engine's instruments are named by the Metric constants and their
// attributes by the Attr constants; a transport documents its own.
package meter
