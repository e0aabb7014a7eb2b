package kafka_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
)

// validating refuses events with a Seq below 1, as generated dispatchers
// refuse invalid events.
type validating struct{ kafka.Target[ev] }

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
		r.Headers = []kgo.RecordHeader{{Key: kafka.HeaderType, Value: []byte(typ)}}
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
	want := []kafka.Reason{kafka.ReasonMissingType, kafka.ReasonUnknownType, kafka.ReasonUndecodable,
		kafka.ReasonMissingKey, kafka.ReasonKeyMismatch, kafka.ReasonInvalidEvent}
	pc := client(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pc.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	b := newBook(3)
	m := startMember(t, c, "g", memberOpts{
		handler: b.handler("a"),
		wrap:    func(tg kafka.Target[ev]) kafka.Target[ev] { return validating{tg} },
	})
	b.wait(t, 30*time.Second)

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
		if h[kafka.HeaderReason] != string(want[i]) || h[kafka.HeaderTopic] != topic || h[kafka.HeaderPartition] != "0" ||
			h[kafka.HeaderOffset] != fmt.Sprint(i+1) || h[kafka.HeaderGroup] != "g" || h[kafka.HeaderError] == "" {
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
	b.wait(t, 30*time.Second)
	m.stop(t)
	if st := m.c.Stats(); st.DeadLettered != 0 {
		t.Errorf("%d records dead-lettered", st.DeadLettered)
	}
}
