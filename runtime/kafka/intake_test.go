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
	"github.com/ordergen/ordergen/runtime/transport"
)

// With the in-memory park, records parked on several partitions can fill
// MaxInFlight before any partition's metadata reaches its bound: the
// consumer then takes nothing more, on any partition, and says so (a
// warning, Stats.Intake, ordergen.kafka.intake.blocked with reason
// "parked"). A replay of the parked key resumes it.
func TestParkedRecordsHoldingMaxInFlightAreReported(t *testing.T) {
	c := newCluster(t, 4)
	p, err := kafka.NewProducer[string, ev](kafka.ProducerConfig[ev]{Client: client(t, c), Topic: topic, Codec: codec{}})
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
	const intakeFull = "the consumer takes no more messages, for any key: messages parked in memory hold MaxInFlight"
	logs := newLogSignal(intakeFull, "the consumer takes messages again")
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
	if st.Intake != transport.BlockedParked || parked != 1 || st.PausedMetadata != 0 {
		t.Errorf("while held: stats %+v, intake metric %v; want BlockedParked, 1, no metadata pause", st, parked)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fixed.Store(true)
	if err := m.engine.Replay(ctx, "bad"); err != nil {
		t.Fatal(err)
	}
	await(t, logs.after("the consumer takes messages again", 1), "the intake to resume")
	await(t, j.done, "every record after the replay")
	m.stop(t)
	j.check(t, want)
}

// Records that park after the intake filled still stop it being reported
// as merely full: here MaxInFlight records of one key are all taken while
// the first one's handler runs, so the feeder waits for room before any
// has parked, and only then do they park. A park in memory settles
// nothing, so it must wake the feeder itself to look again; before, the
// consumer stayed "in_flight" and never warned (a regression test for a
// CI failure of the test above under load).
func TestRecordsParkedWhileTheIntakeWaitsAreReported(t *testing.T) {
	c := newCluster(t, 1)
	p, err := kafka.NewProducer[string, ev](kafka.ProducerConfig[ev]{Client: client(t, c), Topic: topic, Codec: codec{}})
	if err != nil {
		t.Fatal(err)
	}
	const maxInFlight, total = 4, 8
	for i := range total {
		if err := p.Send(context.Background(), "bad", ev{"bad", i + 1}); err != nil {
			t.Fatal(err)
		}
	}
	release := make(chan struct{})
	var fixed atomic.Bool
	var handled atomic.Int64
	allHandled := make(chan struct{})
	const waiting, intakeFull, resumed = "ordergen/kafka: the consumer waits for room", "messages parked in memory hold MaxInFlight", "the consumer takes messages again"
	logs := newLogSignal(waiting, intakeFull, resumed)
	m := startMember(t, c, "g", memberOpts{
		cfg: func(cfg *kafka.Config[ev]) {
			cfg.MaxInFlight = maxInFlight
			cfg.Logger = logs.logger()
		},
		handler: func(ctx context.Context, _ string, _ ev) error {
			if !fixed.Load() {
				select {
				case <-release:
				case <-ctx.Done():
					return ctx.Err()
				}
				return runtime.Permanent(errors.New("broken until fixed"))
			}
			if handled.Add(1) == total {
				close(allHandled)
			}
			return nil
		},
	})
	// The first change of the intake: from open to waiting for room, with
	// the first record still running and none parked.
	await(t, logs.after(waiting, 1), "the feeder to wait for room")
	if st := m.c.Stats(); st.Intake != transport.BlockedInFlight {
		t.Fatalf("with nothing parked yet: intake %v, want %v", st.Intake, transport.BlockedInFlight)
	}
	close(release)
	await(t, logs.after(intakeFull, 1), "the warning that parked records hold the intake")
	if st := m.c.Stats(); st.Intake != transport.BlockedParked {
		t.Errorf("once parked: intake %v, want %v", st.Intake, transport.BlockedParked)
	}
	fixed.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.engine.Replay(ctx, "bad"); err != nil {
		t.Fatal(err)
	}
	await(t, logs.after(resumed, 1), "the intake to resume")
	await(t, allHandled, "every record after the replay")
	m.stop(t)
}
