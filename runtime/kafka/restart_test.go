package kafka_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/ordergen/ordergen/runtime"
)

// The commit metadata makes a restart skip the offsets that were finished
// above the committed one: only what was in flight at the commit runs
// again.
func TestRestartSkipsFinishedOffsets(t *testing.T) {
	c := newCluster(t, 1, crashable)
	produce(t, c, []string{"slow"}, 1, 1) // offset 0: in flight at the commit
	others := keys(100)
	produce(t, c, others, 1, 1) // offsets 1-100: finished at the commit
	a := commitPastSlow(t, c, len(others))
	inflight := a.c.Stats().InFlight
	commit := c.GroupInfo("g").Commits[topic][0]
	if commit.Offset != 0 || commit.Metadata == "" {
		t.Fatalf("commit %d with metadata %q, want 0 with the finished offsets", commit.Offset, commit.Metadata)
	}
	a.kill(t)

	b2 := newBook(1)
	m := startMember(t, c, "g", memberOpts{cfg: shortSessions, handler: b2.handler("b")})
	kc := m.c
	b2.Wait(t, 30*time.Second)
	m.stop(t)
	st := kc.Stats()

	reran, _, _, _ := b2.Snapshot()
	if reran > inflight {
		t.Errorf("%d events ran again, more than the %d in flight at the commit", reran, inflight)
	}
	if st.SkippedFinished != uint64(len(others)) {
		t.Errorf("skipped %d finished offsets, want %d", st.SkippedFinished, len(others))
	}
	if end := c.GroupInfo("g").Commits[topic][0]; end.Offset != int64(len(others)+1) || end.Metadata != "" {
		t.Errorf("final commit %d %q, want %d without metadata", end.Offset, end.Metadata, len(others)+1)
	}
	t.Logf("re-ran %d event(s), %d in flight at the commit; skipped %d; metadata was %d bytes", reran, inflight, st.SkippedFinished, len(commit.Metadata))
}

// Brokers whose offset.metadata.max.bytes is below the bound refuse the
// metadata: the consumer commits the offsets alone.
func TestMetadataTooLargeCommitsOffsetsAlone(t *testing.T) {
	c := newCluster(t, 1, crashable)
	c.ControlKey(int16(kmsg.OffsetCommit), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kr.(*kmsg.OffsetCommitRequest)
		refuse := false
		for _, rt := range req.Topics {
			for _, rp := range rt.Partitions {
				refuse = refuse || (rp.Metadata != nil && *rp.Metadata != "")
			}
		}
		if !refuse {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		resp.Version = req.Version
		for _, rt := range req.Topics {
			st := kmsg.NewOffsetCommitResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewOffsetCommitResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.OffsetMetadataTooLarge.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	produce(t, c, []string{"slow"}, 1, 1)
	produce(t, c, keys(20), 1, 1)
	a := commitPastSlow(t, c, 20)
	a.kill(t)
	if commit := c.GroupInfo("g").Commits[topic][0]; commit.Offset != 0 || commit.Metadata != "" {
		t.Errorf("commit %d %q, want offset 0 without metadata", commit.Offset, commit.Metadata)
	}
}

// commitPastSlow starts a member of group g whose handler holds the event
// of key "slow" until it is cancelled and finishes every other event at
// once. Once n events were reported finished, and their records settled,
// it commits, and returns the member with the slow event still in flight.
func commitPastSlow(t *testing.T, c *kfake.Cluster, n int) *member {
	t.Helper()
	hook, reported := afterOutcomes(n)
	m := startMember(t, c, "g", memberOpts{
		cfg: shortSessions, // it is killed next
		handler: func(ctx context.Context, key string, _ ev) error {
			if key == "slow" {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		},
		engine: hook,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case <-reported:
	case <-ctx.Done():
		t.Fatal("the finished events were never reported")
	}
	// A record settles once its outcome is told and its offer returned: the
	// worker may finish an event before the feeder's offer of it returns.
	// The consumer counts a record in flight until it settles, under the
	// lock that settling holds, so once only the slow one is in flight every
	// other one is in the commit point. (No signal says so: the test polls.)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for m.c.Stats().InFlight > 1 {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("%d records still in flight, want the slow one only", m.c.Stats().InFlight)
		}
	}
	if err := m.c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return m
}

// afterOutcomes returns an engine option that passes outcomes on to the
// consumer and a channel closed once n of them were passed on.
func afterOutcomes(n int) (func(*runtime.Config[string, ev]), <-chan struct{}) {
	done := make(chan struct{})
	var count atomic.Int64
	return func(rc *runtime.Config[string, ev]) {
		consumer := rc.OnOutcome
		rc.OnOutcome = func(key string, tag uint64, o runtime.Outcome) {
			consumer(key, tag, o)
			if count.Add(1) == int64(n) {
				close(done)
			}
		}
	}, done
}
