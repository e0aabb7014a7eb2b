// Package metricstest is for tests of what the runtime records: an in-memory
// meter.Provider, as net/http/httptest is a server for them: it keeps what the
// runtime (or a transport) records and observes, and a test reads it back with
// Collect.
//
//	mp := metricstest.New()
//	d, _ := ledger.NewAccountDispatcher(h, func(c *ledger.AccountConfig) { c.MeterProvider = mp })
//	...
//	m := mp.Collect()
//	skipped := m.Sum(meter.MetricEvents, meter.Attribute{Key: meter.AttrSkipReason, Value: "unimplemented"})
package metricstest
