package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/otelmetrics"
	"github.com/ordergen/ordergen/runtime/transport"
)

const kafkaScope = "github.com/ordergen/ordergen/runtime/kafka"

// scrape reads every instrument of the consumer's scope once, through the
// SDK's manual reader.
func scrape(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name == kafkaScope {
			for _, m := range sm.Metrics {
				out[m.Name] = m
			}
		}
	}
	return out
}

// value returns the sum of the int64 points of m whose attributes include
// want, and whether there was one.
func value(m metricdata.Metrics, want ...attribute.KeyValue) (int64, bool) {
	var sum int64
	found := false
	add := func(set attribute.Set, v int64) {
		for _, kv := range want {
			if got, ok := set.Value(kv.Key); !ok || got != kv.Value {
				return
			}
		}
		sum += v
		found = true
	}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			add(p.Attributes, p.Value)
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			add(p.Attributes, p.Value)
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			if p.Value > 0 {
				add(p.Attributes, 1) // counts the points with an age
			}
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			add(p.Attributes, int64(p.Count))
		}
	}
	return sum, found
}

// The consumer's instruments, read through OpenTelemetry's SDK after a
// scripted run: a key parks in partition 0 until its partition pauses for
// the metadata bound, a bad record is dead-lettered, commits go out, and a
// second member joins (a rebalance). Every instrument is read, with its
// documented attributes.
func TestConsumerInstrumentsThroughOpenTelemetry(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer sdk.Shutdown(context.Background())
	c := newCluster(t, 2)
	// Partition 0: key "bad" every tenth record, which parks; partition 1:
	// one healthy key; and a record that does not decode.
	cl := client(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for i := range 400 {
		key := fmt.Sprintf("k%03d", i)
		if i%10 == 0 {
			key = "bad"
		}
		r := rec(key, "ev", fmt.Sprintf(`{"Key":%q,"Seq":%d}`, key, i/10+1))
		if key != "bad" {
			r.Value = fmt.Appendf(nil, `{"Key":%q,"Seq":1}`, key)
		}
		recs = append(recs, r)
	}
	for i := range 5 {
		r := rec("one", "ev", fmt.Sprintf(`{"Key":"one","Seq":%d}`, i+1))
		r.Partition = 1
		recs = append(recs, r)
	}
	bad := rec("one", "ev", `{"Key":`)
	bad.Partition = 1
	recs = append(recs, bad)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	logs := newLogSignal("partition paused", "dead-lettered", "partitions revoked")
	a := startMember(t, c, "g", memberOpts{
		cfg: func(cfg *kafka.Config[ev]) {
			cfg.MaxMetadataBytes = 64
			cfg.Logger = logs.logger()
			cfg.MeterProvider = otelmetrics.NewMeterProvider(sdk)
		},
		handler: func(_ context.Context, key string, _ ev) error {
			if key == "bad" {
				return runtime.Permanent(errors.New("broken"))
			}
			return nil
		},
	})
	await(t, logs.after("partition paused", 1), "the pause for the metadata bound")
	await(t, logs.after("dead-lettered", 1), "the dead letter")
	if err := a.c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	group := attribute.String(meter.AttrConsumerGroup, "g")
	p0 := []attribute.KeyValue{group, attribute.String(meter.AttrDestination, topic), attribute.String(kafka.AttrPartition, "0")}
	ms := scrape(t, reader)
	expect := func(name string, pred func(int64) bool, what string, attrs ...attribute.KeyValue) {
		t.Helper()
		m, ok := ms[name]
		if !ok {
			t.Errorf("instrument %s not read", name)
			return
		}
		v, found := value(m, attrs...)
		if !found || !pred(v) {
			t.Errorf("%s %v = %d (found %v), want %s", name, attrs, v, found, what)
		}
	}
	positive := func(v int64) bool { return v > 0 }
	one := func(v int64) bool { return v == 1 }
	expect(kafka.MetricConsumed, positive, "records polled", group, attribute.String(meter.AttrDestination, topic), attribute.String(meter.AttrSystem, "kafka"))
	expect(kafka.MetricOperationDuration, positive, "timed commits", group, attribute.String(kafka.AttrOperation, "commit"))
	expect(kafka.MetricLag, positive, "records not committed on the paused partition", p0...)
	expect(kafka.MetricUnfinished, positive, "unfinished records", p0...)
	expect(kafka.MetricUnfinishedAge, one, "an age for the oldest unfinished record", p0...)
	expect(kafka.MetricParked, positive, "records parked in memory", p0...)
	expect(kafka.MetricPaused, one, "one partition paused for its metadata", group, attribute.String(kafka.AttrPauseReason, "metadata"))
	expect(kafka.MetricPaused, func(v int64) bool { return v == 0 }, "none paused for the backlog", group, attribute.String(kafka.AttrPauseReason, "backlog"))
	expect(kafka.MetricMetadataSize, positive, "the metadata committed", p0...)
	zero := func(v int64) bool { return v == 0 }
	expect(kafka.MetricIntakeBlocked, zero, "an intake far from MaxInFlight", group, attribute.String(kafka.AttrIntakeReason, "parked"))
	expect(kafka.MetricIntakeBlocked, zero, "an intake far from MaxInFlight", group, attribute.String(kafka.AttrIntakeReason, "in_flight"))
	expect(kafka.MetricDeadLettered, one, "the undecodable record", group, attribute.String(kafka.AttrDeadLetterReason, string(transport.ReasonUndecodable)))
	expect(kafka.MetricDeadLettered, func(v int64) bool { return v == 0 }, "no failed write", group, attribute.String(meter.AttrErrorType, "write"))
	expect(kafka.MetricRebalances, one, "the assignment", group, attribute.String(kafka.AttrRebalanceKind, "assigned"))

	// A rebalance: a second member joins and takes a partition from the
	// first.
	b := startMember(t, c, "g", memberOpts{handler: func(context.Context, string, ev) error { return nil }})
	await(t, logs.after("partitions revoked", 1), "the revocation")
	ms = scrape(t, reader)
	expect(kafka.MetricRebalances, one, "the revocation", group, attribute.String(kafka.AttrRebalanceKind, "revoked"))
	expect(kafka.MetricRebalances, func(v int64) bool { return v == 0 }, "no loss", group, attribute.String(kafka.AttrRebalanceKind, "lost"))
	expect(kafka.MetricRebalances, positive, "the assignment", group, attribute.String(kafka.AttrRebalanceKind, "assigned"))
	for _, name := range []string{kafka.MetricConsumed, kafka.MetricOperationDuration, kafka.MetricLag, kafka.MetricUnfinished,
		kafka.MetricUnfinishedAge, kafka.MetricParked, kafka.MetricPaused, kafka.MetricIntakeBlocked, kafka.MetricMetadataSize, kafka.MetricDeadLettered, kafka.MetricRebalances} {
		if _, ok := ms[name]; !ok {
			t.Errorf("instrument %s not read after the rebalance", name)
		}
	}
	if len(ms) != 11 {
		t.Errorf("read %d instruments, want the 11 documented", len(ms))
	}
	b.stop(t)
	a.stop(t)
}
