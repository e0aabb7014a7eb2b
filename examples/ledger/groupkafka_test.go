package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
)

const (
	groupTopic    = "ledger.grouped"
	groupConsumer = "ledger-grouped"
)

// TestKafkaLegGrouped: the Kafka consumer feeds a transactional dispatcher
// whose Account subscriber commits in groups. Half way through, a group
// stays open: several accounts wrote in its transaction, one handler is
// blocked in it. The consumer's committed offset, asked to commit then,
// does not pass any event of that group, nor any event whose group has not
// committed: every record below it is in the book. The process then stops
// as a crash would; a new one, in the same consumer group, consumes from
// the committed offset, and every event is applied once.
func TestKafkaLegGrouped(t *testing.T) {
	if testing.Short() {
		t.Skip("an end-to-end crash and restart in a consumer group, seconds long (skipped under -short)")
	}
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			ctx := t.Context()
			l := openGroupLedger(t, dialect)
			cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, groupTopic), kfake.SeedTopics(1, groupTopic+".dlt"))
			if err != nil {
				t.Fatal(err)
			}
			defer cluster.Close()
			admin, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close()
			// One partition: record i is l.seq[i]. The first record goes
			// alone, and its group commits before the rest is sent: the
			// committed offset can then pass something below the open
			// group, and the check below has something to prove. (Sent
			// with the rest, the first record's key could, under load,
			// reach the committer last and leave no group after its own to
			// stop: seen once in CI.)
			produceStream(t, admin, l.seq[:1])

			// The first process: stopped in the first group of several keys
			// that writes past half the stream.
			l.book.stopInSharedTx(len(l.seq) / 2)
			crash, crashed := context.WithCancel(ctx)
			settled := make(chan struct{}, 1)
			// Its groups linger for more keys until they are full (40
			// events; an account has 20, so a full group holds several
			// keys) rather than the schema's 2ms, which a feed slowed down
			// by a loaded machine can miss.
			lingering := func(c *ledger.AccountConfig) { c.Group.Linger = time.Second }
			consumer, d, running := consumeGrouped(t, crash, cluster, l, func(string, uint64, runtime.Outcome) {
				select {
				case settled <- struct{}{}:
				default:
				}
			}, lingering)
			guard := time.NewTimer(time.Minute) // a failure's bound, not a wait
			defer guard.Stop()
			for mustCommitted(t, l) < 1 {
				select {
				case <-settled:
				case <-guard.C:
					t.Fatal("the first record was never applied")
				}
			}
			produceStream(t, admin, l.seq[1:])
			select {
			case <-l.book.stopped:
			case <-guard.C:
				t.Fatalf("no group of several keys stayed open; the book holds %d events; %s", mustCommitted(t, l), l.book.transactions())
			}
			// Commit, again at each outcome, until the committed offset
			// passes the first record.
			var committed int64
			for {
				if err := consumer.Commit(ctx); err != nil {
					t.Fatal(err)
				}
				if committed = committedOffset(t, admin); committed >= 1 {
					break
				}
				select {
				case <-settled:
				case <-guard.C:
					t.Fatalf("committed offset %d: the first record's group committed, but the consumer's offset never passed it", committed)
				}
			}
			open := l.book.sharedStop()
			for _, w := range open {
				if at := offsetOf(l.seq, w.Account, w.Version); at < committed {
					t.Fatalf("the committed offset %d passes %s v%d (offset %d), written in the open group", committed, w.Account, w.Version, at)
				}
			}
			assertApplied(t, l, l.seq[:committed])
			crashed()
			if err := <-running; !errors.Is(err, context.Canceled) {
				t.Fatalf("the crashed consumer's Run: %v", err)
			}
			stop, cancel := context.WithCancel(ctx)
			cancel()
			var ce *runtime.CloseError
			if err := d.Close(stop); err != nil && !errors.As(err, &ce) {
				t.Fatal(err)
			}
			assertApplied(t, l, l.seq[:committedOffset(t, admin)])

			// The second process consumes from the committed offset.
			l.book.resume()
			l.book.stopShared = false
			// It ends when the book holds every event. Counting its
			// Handled outcomes against what the book lacked would race:
			// the crashed process's abandoned lanes may still commit a
			// group after Close returned (a test's crash is not a kill),
			// which leaves the second process those events to skip. So
			// each of its outcomes (it has some: the records above the
			// committed offset come again) asks for a look at the book.
			var mu sync.Mutex
			handled := 0
			outcome := make(chan struct{}, 1)
			counted := func(key string, tag uint64, o runtime.Outcome) {
				if o == runtime.Handled {
					mu.Lock()
					handled++
					mu.Unlock()
				}
				select {
				case outcome <- struct{}{}:
				default:
				}
			}
			consumer2, d2, running2 := consumeGrouped(t, ctx, cluster, l, counted)
			for mustCommitted(t, l) < len(l.seq) {
				select {
				case <-outcome:
				case <-guard.C:
					mu.Lock()
					defer mu.Unlock()
					t.Fatalf("the second process handled %d events; the book holds %d of %d", handled, mustCommitted(t, l), len(l.seq))
				}
			}
			mu.Lock()
			rest := handled
			mu.Unlock()
			if err := consumer2.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-running2; err != nil {
				t.Fatal(err)
			}
			if err := d2.Close(ctx); err != nil {
				t.Fatal(err)
			}
			balances, twice, err := l.book.snapshot(ctx, l.store.DB())
			if err != nil {
				t.Fatal(err)
			}
			if twice != 0 || !maps.Equal(balances, l.want) {
				t.Fatalf("balances %v (%d events applied twice), in-order application gives %v", balances, twice, l.want)
			}
			assertLastVersions(t, l.store)
			t.Logf("%s: a group of %d events stayed open above offset %d, which the consumer committed; the restart applied the %d events left, each once (the book's count of applications)",
				dialect, len(open), committed, rest)
		})
	}
}

// produceStream sends seq to groupTopic's one partition, in order, after
// what was sent before.
func produceStream(t *testing.T, cl *kgo.Client, seq []entry) {
	t.Helper()
	producer, err := kafka.NewProducer[string, ledger.AccountEvent](kafka.ProducerConfig[ledger.AccountEvent]{Client: cl, Topic: groupTopic, Codec: ledger.AccountCodec{}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ledger.NewAccountProducer(producer)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range seq {
		if err := publish(t.Context(), p, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := producer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// consumeGrouped starts a consumer of groupTopic in groupConsumer feeding a
// new transactional dispatcher over l's store, which groups Account's
// events, at most 40 to a group, and keeps a group open however long a
// handler takes (MaxWork).
// also, when set, is told every outcome too; opts then change the
// dispatcher's configuration. running gets Run's result.
func consumeGrouped(t *testing.T, ctx context.Context, cluster *kfake.Cluster, l *durableLedger, also runtime.OutcomeFunc[string], opts ...ledger.AccountOption) (*kafka.Consumer[string, ledger.AccountEvent], *ledger.AccountDispatcher, chan error) {
	t.Helper()
	consumer, err := kafka.NewConsumer[string, ledger.AccountEvent](kafka.Config[ledger.AccountEvent]{
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.FetchMaxWait(50 * time.Millisecond)},
		Group:      groupConsumer, Topics: []string{groupTopic}, DeadLetterTopic: groupTopic + ".dlt", Codec: ledger.AccountCodec{}, Logger: quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := l.start(append([]ledger.AccountOption{func(c *ledger.AccountConfig) {
		c.MaxActive = durableAccounts
		c.Group.MaxWork = time.Hour
		c.Group.MaxEvents = 40 // groups of a few keys: several commit before the one that stays open
		c.OnOutcome = consumer.OnOutcome
		if also != nil {
			c.OnOutcome = func(key string, tag uint64, o runtime.Outcome) {
				consumer.OnOutcome(key, tag, o)
				also(key, tag, o)
			}
		}
	}}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	running := make(chan error, 1)
	go func() { running <- consumer.Run(ctx, d) }()
	return consumer, d, running
}

// committedOffset returns groupConsumer's committed offset of groupTopic's
// partition, 0 when none.
func committedOffset(t *testing.T, cl *kgo.Client) int64 {
	t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = groupConsumer
	topic := kmsg.NewOffsetFetchRequestTopic()
	topic.Topic, topic.Partitions = groupTopic, []int32{0}
	req.Topics = append(req.Topics, topic)
	group := kmsg.NewOffsetFetchRequestGroup()
	group.Group = groupConsumer
	gtopic := kmsg.NewOffsetFetchRequestGroupTopic()
	gtopic.Topic, gtopic.Partitions = groupTopic, []int32{0}
	group.Topics = append(group.Topics, gtopic)
	req.Groups = append(req.Groups, group)
	resp, err := req.RequestWith(t.Context(), cl)
	if err != nil {
		t.Fatal(err)
	}
	offset := int64(-1)
	for _, g := range resp.Groups {
		for _, tp := range g.Topics {
			for _, p := range tp.Partitions {
				offset = p.Offset
			}
		}
	}
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			offset = max(offset, p.Offset)
		}
	}
	return max(offset, 0)
}

// offsetOf returns the offset of account's version in seq, as
// produceStream sent it.
func offsetOf(seq []entry, account string, version uint64) int64 {
	for i, e := range seq {
		if e.account == account && e.version == version {
			return int64(i)
		}
	}
	panic(fmt.Sprintf("%s v%d is not in the stream", account, version))
}

// assertApplied fails unless every event of records is in the book,
// committed.
func assertApplied(t *testing.T, l *durableLedger, records []entry) {
	t.Helper()
	for i, e := range records {
		var n int
		if err := l.store.DB().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM `+l.book.applied+` WHERE account = $1 AND version = $2`,
			e.account, int64(e.version)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("record %d (%s v%d) is below the committed offset, and the book holds it %d times", i, e.account, e.version, n)
		}
	}
}

// mustCommitted returns how many events the book holds.
func mustCommitted(t *testing.T, l *durableLedger) int {
	t.Helper()
	n, err := l.committed(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}
