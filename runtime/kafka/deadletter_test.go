package kafka_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
	"github.com/ordergen/ordergen/runtime/transport"
)

// validating refuses events with a Seq below 1, as generated dispatchers
// refuse invalid events.
type validating struct{ transport.Target[ev] }

func (v validating) SubmitTagged(ctx context.Context, e ev, tag uint64, from int) (int, error) {
	if e.Seq < 1 {
		return 0, fmt.Errorf("%w: seq %d", runtime.ErrInvalidEvent, e.Seq)
	}
	return v.Target.SubmitTagged(ctx, e, tag, from)
}

func rec(key, typ, value string) *kgo.Record {
	r := &kgo.Record{Topic: topic, Value: []byte(value)}
	if key != "" {
		r.Key = []byte(key)
	}
	if typ != "" {
		r.Headers = []kgo.RecordHeader{{Key: transport.HeaderType, Value: []byte(typ)}}
	}
	return r
}

// Bad records reach the dead-letter topic with their reason and origin in
// headers, and the partition keeps flowing: the good records after them are
// applied and the commit reaches the end of the partition.
func TestBadRecordsDeadLettered(t *testing.T) {
	c := newCluster(t, 1)
	records := []*kgo.Record{
		rec("k1", "ev", `{"Key":"k1","Seq":1}`),
		rec("k1", "", `{"Key":"k1","Seq":2}`),      // missing-type
		rec("k1", "evNew", `{"Key":"k1","Seq":2}`), // unknown-type
		rec("k1", "ev", `{"Key":`),                 // undecodable
		rec("", "ev", `{"Key":"k1","Seq":2}`),      // missing-key
		rec("k2", "ev", `{"Key":"k1","Seq":2}`),    // key-mismatch
		rec("k1", "ev", `{"Key":"k1","Seq":0}`),    // invalid-event
		rec("k1", "ev", `{"Key":"k1","Seq":2}`),
		rec("k3", "ev", `{"Key":"k3","Seq":1}`),
	}
	want := []transport.Reason{transport.ReasonMissingType, transport.ReasonUnknownType, transport.ReasonUndecodable,
		transport.ReasonMissingKey, transport.ReasonKeyMismatch, transport.ReasonInvalidEvent}
	pc := client(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pc.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	b := newBook(3)
	m := startMember(t, c, "g", memberOpts{
		handler: b.handler("a"),
		wrap:    func(tg transport.Target[ev]) transport.Target[ev] { return validating{tg} },
	})
	b.Wait(t, 30*time.Second)

	dc := client(t, c, kgo.ConsumeTopics(dlt), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []*kgo.Record
	for len(got) < len(want) {
		fs := dc.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("%d dead letters, want %d", len(got), len(want))
		}
		got = append(got, fs.Records()...)
	}
	m.stop(t)
	st := m.c.Stats()

	for i, r := range got {
		h := map[string]string{}
		for _, x := range r.Headers {
			h[x.Key] = string(x.Value)
		}
		if i >= len(want) {
			t.Errorf("unexpected dead letter %d: %v", i, h)
			continue
		}
		if h[transport.HeaderReason] != string(want[i]) || h[kafka.HeaderTopic] != topic || h[kafka.HeaderPartition] != "0" ||
			h[kafka.HeaderOffset] != fmt.Sprint(i+1) || h[kafka.HeaderGroup] != "g" || h[transport.HeaderError] == "" {
			t.Errorf("dead letter %d headers %v, want reason %s from offset %d", i, h, want[i], i+1)
		}
		if !slices.Equal(r.Value, records[i+1].Value) || !slices.Equal(r.Key, records[i+1].Key) {
			t.Errorf("dead letter %d is %q %q, want the original record", i, r.Key, r.Value)
		}
	}
	if st.DeadLettered != uint64(len(want)) {
		t.Errorf("stats count %d dead letters, want %d", st.DeadLettered, len(want))
	}
	if end := c.GroupInfo("g").Commits[topic][0]; end.Offset != int64(len(records)) {
		t.Errorf("commit %d, want %d: the partition did not flow past its bad records", end.Offset, len(records))
	}
}

// With AcceptKeyless a record without a key is ordered by its event's key
// instead of going to the dead-letter topic.
func TestAcceptKeyless(t *testing.T) {
	c := newCluster(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := client(t, c).ProduceSync(ctx, rec("", "ev", `{"Key":"k1","Seq":1}`), rec("k1", "ev", `{"Key":"k1","Seq":2}`)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	b := newBook(2)
	m := startMember(t, c, "g", memberOpts{
		cfg:     func(cfg *kafka.Config[ev]) { cfg.AcceptKeyless = true },
		handler: b.handler("a"),
	})
	b.Wait(t, 30*time.Second)
	m.stop(t)
	if st := m.c.Stats(); st.DeadLettered != 0 {
		t.Errorf("%d records dead-lettered", st.DeadLettered)
	}
}

// Regression (found by TestBadRecordsDeadLettered under -count=3): a
// dead-letter write still in flight when the partition's ownership ended
// left its record unfinished, so the final commit stayed before it. The
// consumer now waits for the write (up to RevokeTimeout) before it ends
// the ownership.
func TestCloseWaitsForDeadLetterWrites(t *testing.T) {
	c := newCluster(t, 1)
	release := make(chan struct{})
	c.ControlKey(int16(kmsg.Produce), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, rt := range kr.(*kmsg.ProduceRequest).Topics {
			if rt.Topic == dlt {
				c.SleepControl(func() { <-release })
			}
		}
		return nil, nil, false
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := client(t, c).ProduceSync(ctx, rec("k1", "ev", `{"Key":`), rec("k1", "ev", `{"Key":"k1","Seq":1}`)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	b := newBook(1)
	logs := newLogSignal("waiting for dead-letter writes")
	m := startMember(t, c, "g", memberOpts{handler: b.handler("a"), cfg: func(cfg *kafka.Config[ev]) { cfg.Logger = logs.logger() }})
	b.Wait(t, 30*time.Second)
	closed := make(chan error, 1)
	go func() { closed <- m.c.Close(ctx) }()
	await(t, logs.after("waiting for dead-letter writes", 1), "Close to wait for the dead-letter write")
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if err := m.engine.Close(ctx); err != nil {
		t.Fatal(err)
	}
	m.cancel()
	if end := c.GroupInfo("g").Commits[topic][0]; end.Offset != 2 {
		t.Errorf("final commit %d, want 2: the dead-lettered record is finished", end.Offset)
	}
}
