package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
)

// With the in-memory park, records parked on several partitions can fill
// MaxInFlight before any partition's metadata reaches its bound: the
// consumer then takes nothing more, on any partition, and says so (a
// warning, Stats.Intake, ordergen.kafka.intake.blocked with reason
// "parked"). A replay of the parked key resumes it.
func TestParkedRecordsHoldingMaxInFlightAreReported(t *testing.T) {
	c := newCluster(t, 4)
	p, err := kafka.NewProducer[string, ev](client(t, c), topic, codec{})
	if err != nil {
		t.Fatal(err)
	}
	const total = 400
	want := map[string]int{}
	for i := range total {
		key := fmt.Sprintf("k%04d", i)
		if i%5 == 0 {
			key = "bad"
		}
		want[key]++
		if err := p.Send(context.Background(), key, ev{key, want[key]}); err != nil {
			t.Fatal(err)
		}
	}
	var fixed atomic.Bool
	j := newJournal(total)
	const intakeFull = "the consumer stopped taking records: records parked in memory hold its MaxInFlight"
	logs := newLogSignal(intakeFull, "the consumer takes records again")
	mp := metricstest.New()
	m := startMember(t, c, "g", memberOpts{
		cfg: func(cfg *kafka.Config[ev]) {
			cfg.MaxInFlight = 16
			cfg.Logger = logs.logger()
			cfg.MeterProvider = mp
		},
		handler: func(_ context.Context, key string, e ev) error {
			if key == "bad" && !fixed.Load() {
				return runtime.Permanent(errors.New("broken until fixed"))
			}
			j.apply(e)
			return nil
		},
	})
	await(t, logs.after(intakeFull, 1), "the warning that parked records hold the intake")
	st := m.c.Stats()
	parked, _ := mp.Collect().Sum(kafka.MetricIntakeBlocked, meter.Attribute{Key: kafka.AttrIntakeReason, Value: "parked"})
	if st.Intake != kafka.IntakeParked || parked != 1 || st.PausedMetadata != 0 {
		t.Errorf("while held: stats %+v, intake metric %v; want IntakeParked, 1, no metadata pause", st, parked)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fixed.Store(true)
	if err := m.engine.Replay(ctx, "bad"); err != nil {
		t.Fatal(err)
	}
	await(t, logs.after("the consumer takes records again", 1), "the intake to resume")
	await(t, j.done, "every record after the replay")
	m.stop(t)
	j.check(t, want)
}
