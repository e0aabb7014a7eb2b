package kafka

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/transport"
)

// testEv is the tests' one event, the Seq-th of Key; package kafka_test
// knows it as ev (export_test.go).
type testEv struct {
	Key string
	Seq int
}

func (e testEv) EventKey() string { return e.Key }

// testCodec is the tests' codec of testEv, by JSON, with the event type
// "ev"; package kafka_test knows it as codec.
type testCodec struct{}

func (testCodec) Encode(e testEv) (string, []byte, error) {
	data, err := json.Marshal(e)
	return "ev", data, err
}

func (testCodec) Decode(name string, data []byte) (testEv, error) {
	var e testEv
	if name != "ev" {
		return e, fmt.Errorf("%w: %q", durable.ErrUnknownEventType, name)
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return e, fmt.Errorf("%w: %v", runtime.ErrInvalidEvent, err)
	}
	return e, nil
}

// decodeAll decodes a poll on several goroutines that claim chunks of its
// records, into a buffer that every poll reuses: each record's message must
// still be that record's, in its partition's order, with nothing left of
// an earlier poll (a bad record's ID, a trace context).
func TestDecodeAllPutsEveryRecordInItsPlace(t *testing.T) {
	c := &Consumer[string, testEv]{dec: transport.Decoder[string, testEv]{Codec: testCodec{}}}
	polls := [][]int{
		{300, 1, 700, 45}, // decoded on several goroutines, in many chunks
		{5, 2},            // fewer records, in the same buffer
		{260, 3},
	}
	for pi, sizes := range polls {
		var taken []polled[string, testEv]
		for part, n := range sizes {
			p := &partition[string, testEv]{tp: tp{"events", int32(part)}}
			var recs []*kgo.Record
			for off := range n {
				key := fmt.Sprintf("p%d-k%d", part, off%7)
				value := fmt.Appendf(nil, `{"Key":%q,"Seq":%d}`, key, off)
				headers := []kgo.RecordHeader{{Key: transport.HeaderType, Value: []byte("ev")}}
				switch {
				case pi == 0 && off%97 == 13:
					value = []byte("not json") // a bad record, whose ID the next poll must not keep
				case pi == 0 && off%50 == 7:
					headers = append(headers, kgo.RecordHeader{Key: transport.HeaderTraceParent, Value: []byte("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")})
				}
				recs = append(recs, &kgo.Record{Topic: "events", Partition: int32(part), Offset: int64(off), Key: []byte(key), Value: value, Headers: headers})
			}
			taken = append(taken, polled[string, testEv]{p: p, recs: recs})
		}
		c.decodeAll(taken)
		for _, pr := range taken {
			if len(pr.ms) != len(pr.recs) {
				t.Fatalf("poll %d, partition %d: %d messages for %d records", pi, pr.p.partition, len(pr.ms), len(pr.recs))
			}
			for j, r := range pr.recs {
				m := &pr.ms[j]
				if m.Handle.p != pr.p || m.Handle.offset != r.Offset || m.Raw != r {
					t.Fatalf("poll %d, partition %d, record %d: a message of another record (its own partition: %v, offset %d)", pi, pr.p.partition, j, m.Handle.p == pr.p, m.Handle.offset)
				}
				bad := pi == 0 && j%97 == 13
				switch {
				case bad && (m.Bad == nil || m.ID == ""):
					t.Errorf("poll %d, partition %d, record %d: a bad record decoded (%+v)", pi, pr.p.partition, j, m)
				case !bad && m.Bad != nil:
					t.Errorf("poll %d, partition %d, record %d: %v", pi, pr.p.partition, j, m.Bad.Err)
				case !bad && (m.Event != testEv{string(r.Key), j} || m.ID != ""):
					t.Errorf("poll %d, partition %d, record %d: event %+v, ID %q", pi, pr.p.partition, j, m.Event, m.ID)
				}
				if traced := pi == 0 && j%50 == 7 && !bad; traced != (m.Trace.Parent != "") {
					t.Errorf("poll %d, partition %d, record %d: trace context %+v", pi, pr.p.partition, j, m.Trace)
				}
			}
		}
		clear(c.msgs) // as the feeder does once the streams took them
	}
}
