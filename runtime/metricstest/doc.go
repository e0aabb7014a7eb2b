// Package metricstest is an in-memory runtime.MeterProvider for tests, as
// net/http/httptest is a server for them: it keeps what the runtime (or a
// transport) records and observes, and a test reads it back with Collect.
//
//	mp := metricstest.New()
//	d, _ := ledger.NewAccountDispatcher(h, func(c *ledger.AccountConfig) { c.MeterProvider = mp })
//	...
//	m := mp.Collect()
//	skipped := m.Sum(runtime.MetricEvents, runtime.Attribute{Key: runtime.AttrSkipReason, Value: "unimplemented"})
package metricstest
