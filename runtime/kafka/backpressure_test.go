package kafka_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/inspect"
	"github.com/ordergen/ordergen/runtime/kafka"
)

// When the lanes are full the partition pauses instead of buffering, and
// resumes when there is room: every event is applied, in order.
func TestFullLanesPausePartition(t *testing.T) {
	c := newCluster(t, 1)
	produce(t, c, []string{"hot"}, 1, 50)
	b := newBook(50)
	gate := make(chan struct{})
	pl := pauseLog{level: slog.LevelDebug, once: &sync.Once{}, paused: make(chan struct{})}
	m := startMember(t, c, "g", memberOpts{
		handler: func(ctx context.Context, _ string, e ev) error {
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
			b.apply("a", e)
			return nil
		},
		engine: func(rc *runtime.Config[string, ev]) {
			rc.Backlog = runtime.Backlog{PerKey: 3, Total: 3, WhenFull: runtime.Block}
		},
		cfg: func(cfg *kafka.Config[ev]) { cfg.Logger = slog.New(pl) },
	})
	select {
	case <-pl.paused:
	case <-time.After(30 * time.Second):
		t.Fatal("the partition never paused")
	}
	paused := m.c.Stats()
	status := m.c.TransportStatus()
	close(gate)
	b.Wait(t, 30*time.Second)
	m.stop(t)
	applied, _, skips, _ := b.Snapshot()
	if len(skips) > 0 || applied != 50 {
		t.Errorf("applied %d of 50, skips %v", applied, skips)
	}
	// In flight: the three events the lanes hold and the one they refused.
	if paused.Paused != 1 || paused.InFlight > 4 {
		t.Errorf("with full lanes: %d partitions paused, %d records in flight; want 1 and at most 4", paused.Paused, paused.InFlight)
	}
	if end := m.c.Stats(); end.Paused != 0 || end.Pauses == 0 {
		t.Errorf("after: %d paused, %d pauses", end.Paused, end.Pauses)
	}
	// What an operator's console shows of it then.
	if len(status.Partitions) != 1 || status.Partitions[0].Paused != "backlog" || status.Partitions[0].Name != topic+"/0" ||
		status.Partitions[0].Unfinished == 0 || status.Kind != "kafka" || !strings.Contains(status.Name, "group g") {
		t.Errorf("transport status while paused: %+v", status)
	}
	if end := m.c.TransportStatus(); len(end.Partitions) != 0 {
		t.Errorf("transport status after the consumer stopped: %+v", end)
	}
}

var _ inspect.Transport = (*kafka.Consumer[string, ev])(nil)

// pauseLog signals when the consumer logs a partition pause at level: Warn
// for the metadata bound, Debug for full lanes.
type pauseLog struct {
	slog.Handler
	level  slog.Level
	once   *sync.Once
	paused chan struct{}
}

func (h pauseLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level == h.level && strings.Contains(r.Message, "partition paused") {
		h.once.Do(func() { close(h.paused) })
	}
	return nil
}

func (h pauseLog) Enabled(context.Context, slog.Level) bool { return true }

// Records parked in the in-memory park stay uncommitted; when their gaps
// would make the commit metadata pass its bound, the partition pauses, and
// the metadata committed stays within the bound.
func TestParkedRecordsFillMetadataThenPause(t *testing.T) {
	c := newCluster(t, 1)
	ks := keys(1000)
	p, err := kafka.NewProducer[string, ev](kafka.ProducerConfig[ev]{Client: client(t, c), Topic: topic, Codec: codec{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks { // in order: offset i holds key i
		if err := p.Send(context.Background(), k, ev{k, 1}); err != nil {
			t.Fatal(err)
		}
	}
	const bound = 64
	const metadataPause = "partition paused: its commit metadata"
	logs := newLogSignal(metadataPause)
	m := startMember(t, c, "g", memberOpts{
		cfg: func(cfg *kafka.Config[ev]) {
			cfg.MaxMetadataBytes = bound
			cfg.Logger = logs.logger()
		},
		handler: func(_ context.Context, key string, _ ev) error {
			if key[len(key)-1] == '0' { // every tenth key fails for good
				return runtime.Permanent(errors.New("broken"))
			}
			return nil
		},
	})
	// The partition may first pause for the records in flight (their gaps
	// could pass the bound) and resume as they finish. Once every record
	// taken has its outcome, a pause still on is the parked records' doing.
	var st kafka.Stats
	for n := 1; ; n++ {
		await(t, logs.after(metadataPause, n), "the partition to pause for the metadata bound")
		flushCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := m.engine.Flush(flushCtx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if st = m.c.Stats(); st.PausedMetadata == 1 && st.Parked > 0 {
			break
		}
	}
	status := m.c.TransportStatus()
	m.stop(t)
	if p := status.Partitions; len(p) != 1 || p[0].Paused != "metadata" || p[0].Parked == 0 || !strings.Contains(p[0].Detail, "high watermark 1000") {
		t.Errorf("transport status while paused for the metadata: %+v", status)
	}
	commit := c.GroupInfo("g").Commits[topic][0]
	if len(commit.Metadata) > bound || commit.Metadata == "" {
		t.Errorf("metadata %q (%d bytes), bound %d", commit.Metadata, len(commit.Metadata), bound)
	}
	if commit.Offset != 0 {
		t.Errorf("committed %d, want 0: the first record is parked", commit.Offset)
	}
	if st.Parked == 0 || st.PausedMetadata != 1 || st.Finished+uint64(st.Parked) >= uint64(len(ks)) || st.MetadataTruncated != 0 {
		t.Errorf("stats %+v: want parked records, a partition paused for its metadata before the end, no truncation", st)
	}
	t.Logf("paused after %d records (%d parked); metadata %d bytes", st.Finished+uint64(st.Parked), st.Parked, len(commit.Metadata))
}
