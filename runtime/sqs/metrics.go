package sqs

import (
	"fmt"

	"github.com/ordergen/ordergen/runtime/meter"
)

// Metric names of the consumer's calls to SQS, beside those of its
// key-ordered core (see the package documentation).
const (
	// MetricExtensions counts the visibility extensions SQS confirmed and,
	// with AttrErrorType, those that failed: "refused" (SQS answered no:
	// it took the message back) or "request" (the call failed or got no
	// answer in time: the consumer trusts only what SQS confirmed).
	MetricExtensions = "ordergen.sqs.visibility.extensions"
	// MetricSettleErrors counts the messages whose settlement SQS was not
	// told of, by AttrErrorType: "delete" (a finished message comes back
	// when its visibility ends and runs again) or "return" (an unfinished
	// one comes back when its visibility ends instead of at once).
	MetricSettleErrors = "ordergen.sqs.settle.errors"
)

// startMetrics registers the consumer's own instruments with
// Config.MeterProvider; the function it returns unregisters them.
func (c *Consumer[K, E]) startMetrics() (func(), error) {
	mp := c.cfg.MeterProvider
	if mp == nil {
		return func() {}, nil
	}
	m := mp.Meter(meterName)
	if m == nil {
		return nil, fmt.Errorf("metrics: the MeterProvider gave no meter")
	}
	with := func(more ...meter.Attribute) meter.AttributeSet {
		return m.Attributes(append([]meter.Attribute{
			{Key: meter.AttrSystem, Value: "aws_sqs"},
			{Key: meter.AttrDestination, Value: c.cfg.QueueURL},
		}, more...)...)
	}
	ext := meter.Instrument{Name: MetricExtensions, Kind: meter.KindObservedCounter, Unit: "{message}",
		Description: "Visibility extensions SQS confirmed; with error.type, those that failed."}
	settle := meter.Instrument{Name: MetricSettleErrors, Kind: meter.KindObservedCounter, Unit: "{message}",
		Description: "Messages whose deletion or return SQS was not told of, by error.type."}
	ok := with()
	refused := with(meter.Attribute{Key: meter.AttrErrorType, Value: "refused"})
	request := with(meter.Attribute{Key: meter.AttrErrorType, Value: "request"})
	del := with(meter.Attribute{Key: meter.AttrErrorType, Value: "delete"})
	ret := with(meter.Attribute{Key: meter.AttrErrorType, Value: "return"})
	unregister, err := m.Observe(func(o meter.Observer) {
		c.mu.Lock()
		s := c.stats
		c.mu.Unlock()
		ls := c.leases.Stats()
		o.ObserveInt64(ext, int64(ls.Extensions), ok)
		o.ObserveInt64(ext, int64(ls.Refused), refused)
		o.ObserveInt64(ext, int64(ls.Errors-ls.Refused), request)
		o.ObserveInt64(settle, int64(s.deleteErrors), del)
		o.ObserveInt64(settle, int64(s.returnErrors), ret)
	}, ext, settle)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return func() { _ = unregister() }, nil
}
