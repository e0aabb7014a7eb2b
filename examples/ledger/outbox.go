package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime/kafka"
	"github.com/ordergen/ordergen/runtime/outbox"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/transport"
)

// The outbox leg: the service that owns the accounts writes each balance
// change and its event in one transaction (AccountOutbox numbers the
// event), a relay ships the events to Kafka (kfake, in process), a
// consumer applies them behind the version guards, and the first relay
// crashes between sending a round and marking it.
const (
	outboxAccounts   = 12
	outboxEvents     = 25         // per account, opened included
	outboxHot        = "acct-hot" // deposited into by outboxWriters writers at once
	outboxHotEach    = 15         // deposits per writer into outboxHot
	outboxWriters    = 4
	outboxTopic      = "ledger.outbox"
	outboxCrashAfter = 90 // events the first relay sends before it crashes (its other senders finish theirs)
)

// producerBook is the owner's table of balances, written in the same
// transactions as the events.
type producerBook struct{ table string }

func newProducerBook(ctx context.Context, db *sql.DB) (*producerBook, error) {
	b := &producerBook{table: "ledger_example_outbox_balances"}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+b.table+` (account TEXT PRIMARY KEY, balance BIGINT NOT NULL)`); err != nil {
		return nil, fmt.Errorf("create %s: %w", b.table, err)
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM `+b.table); err != nil {
		return nil, fmt.Errorf("reset %s: %w", b.table, err)
	}
	return b, nil
}

// write changes the balance of e's account and appends the event that
// announces it, in one transaction: both commit, or neither. The outbox
// gives the event its version.
func (b *producerBook) write(ctx context.Context, db *sql.DB, accounts *ledger.AccountOutbox, e entry) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	switch e.kind {
	case "open":
		if _, err = tx.ExecContext(ctx, `INSERT INTO `+b.table+` (account, balance) VALUES ($1, 0)`, e.account); err == nil {
			_, err = accounts.PublishAccountOpenedTx(ctx, tx, ledger.AccountOpened{AccountID: e.account, Owner: "owner of " + e.account})
		}
	case "deposit":
		if _, err = tx.ExecContext(ctx, `UPDATE `+b.table+` SET balance = balance + $2 WHERE account = $1`, e.account, e.amount); err == nil {
			_, err = accounts.PublishDepositedTx(ctx, tx, ledger.Deposited{AccountID: e.account, Amount: e.amount})
		}
	case "withdraw":
		if _, err = tx.ExecContext(ctx, `UPDATE `+b.table+` SET balance = balance - $2 WHERE account = $1`, e.account, e.amount); err == nil {
			_, err = accounts.PublishWithdrewTx(ctx, tx, ledger.Withdrew{AccountID: e.account, Amount: e.amount})
		}
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", e.kind, e.account, err)
	}
	return tx.Commit()
}

func (b *producerBook) balances(ctx context.Context, db *sql.DB) (map[string]int64, error) {
	rows, err := db.QueryContext(ctx, `SELECT account, balance FROM `+b.table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var a string
		var v int64
		if err := rows.Scan(&a, &v); err != nil {
			return nil, err
		}
		out[a] = v
	}
	return out, rows.Err()
}

// consumerBook is the consumer's AccountHandler: the balances it applied
// behind the version guards, with each account's last version.
type consumerBook struct {
	ledger.UnimplementedAccountHandler
	mu       sync.Mutex
	balances map[string]int64
	versions map[string]uint64
	gaps     int // an event applied out of version order: never, behind the guards
	applied  int
	want     int
	done     chan struct{}
}

func (b *consumerBook) apply(account string, version uint64, delta int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if version != b.versions[account]+1 {
		b.gaps++
	}
	b.versions[account] = version
	b.balances[account] += delta
	if b.applied++; b.applied == b.want {
		close(b.done)
	}
}

func (b *consumerBook) HandleAccountOpened(_ context.Context, e ledger.AccountOpened) error {
	b.apply(e.AccountID, e.Version, 0)
	return nil
}

func (b *consumerBook) HandleDeposited(_ context.Context, e ledger.Deposited) error {
	b.apply(e.AccountID, e.Version, e.Amount)
	return nil
}

func (b *consumerBook) HandleWithdrew(_ context.Context, e ledger.Withdrew) error {
	b.apply(e.AccountID, e.Version, -e.Amount)
	return nil
}

// crashingSink passes events to the Kafka producer and, after the
// crashAfter-th, ends its relay's context: the process dies with the rest
// of the round sent and nothing of it marked.
type crashingSink struct {
	transport.Sink[string, ledger.AccountEvent]
	crashAfter int64
	crash      context.CancelFunc
	sent       atomic.Int64
}

func (s *crashingSink) Send(ctx context.Context, key string, e ledger.AccountEvent) error {
	if err := s.Sink.Send(ctx, key, e); err != nil {
		return err
	}
	if s.sent.Add(1) == s.crashAfter {
		s.crash()
	}
	return nil
}

// runOutbox plays the outbox leg.
func runOutbox(ctx context.Context, out io.Writer, store *sqlstore.Store, seed uint64) error {
	if err := store.DeleteOutbox(ctx, "Account"); err != nil {
		return err
	}
	book, err := newProducerBook(ctx, store.DB())
	if err != nil {
		return err
	}
	accounts, err := ledger.NewAccountOutbox(store)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 20))
	want := map[string]int64{outboxHot: 0}
	var streams [][]entry
	for i := range outboxAccounts {
		s, balance := accountStream(rng, fmt.Sprintf("acct-%d", i), outboxEvents)
		streams = append(streams, s)
		want[s[0].account] = balance
	}
	seq := interleave(rng, streams)
	total := len(seq) + 1 + outboxWriters*outboxHotEach

	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(12, outboxTopic), kfake.SeedTopics(1, outboxTopic+".dlt"))
	if err != nil {
		return fmt.Errorf("start the cluster: %w", err)
	}
	defer cluster.Close()
	pcl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		return err
	}
	defer pcl.Close()
	producer, err := kafka.NewProducer[string, ledger.AccountEvent](kafka.ProducerConfig[ledger.AccountEvent]{Client: pcl, Topic: outboxTopic, Codec: ledger.AccountCodec{}})
	if err != nil {
		return err
	}

	// The consumer, with its version guards.
	consumed := &consumerBook{balances: map[string]int64{}, versions: map[string]uint64{}, want: total, done: make(chan struct{})}
	consumer, err := kafka.NewConsumer[string, ledger.AccountEvent](kafka.Config[ledger.AccountEvent]{
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.FetchMaxWait(50 * time.Millisecond)},
		Group:      "ledger-outbox", Topics: []string{outboxTopic}, DeadLetterTopic: outboxTopic + ".dlt", Codec: ledger.AccountCodec{}, Logger: quietLogger(),
	})
	if err != nil {
		return err
	}
	d, err := ledger.NewAccountDispatcher(consumed, func(c *ledger.AccountConfig) {
		c.OnOutcome = consumer.OnOutcome
		c.Logger = quietLogger()
	})
	if err != nil {
		return err
	}
	consuming := make(chan error, 1)
	go func() { consuming <- consumer.Run(context.WithoutCancel(ctx), d) }()
	defer func() {
		consumer.Close(context.WithoutCancel(ctx))
		<-consuming
		d.Close(context.WithoutCancel(ctx))
	}()

	// The owner writes; the first relay ships and crashes mid-stream.
	relayCfg := outbox.Config[string, ledger.AccountEvent]{Store: store, Entity: accounts.Entity(), Codec: ledger.AccountCodec{}, Batch: 32, Logger: quietLogger()}
	crashCtx, crash := context.WithCancel(ctx)
	defer crash()
	first := &crashingSink{Sink: producer, crashAfter: outboxCrashAfter, crash: crash}
	relayCfg.Sink = first
	relay1, err := outbox.New(relayCfg)
	if err != nil {
		return err
	}
	relayed := make(chan error, 1)
	go func() { relayed <- relay1.Run(crashCtx) }()
	if err := writeOutbox(ctx, store.DB(), book, accounts, seq); err != nil {
		return err
	}
	if err := <-relayed; !errors.Is(err, context.Canceled) {
		return fmt.Errorf("the first relay did not crash: %v", err)
	}
	relay1.Close(ctx)
	backlog, err := store.OutboxBacklog(ctx, accounts.Entity())
	if err != nil {
		return err
	}
	sentUnmarked := int(first.sent.Load()) - (total - backlog.Unsent)

	// The second relay ships the rest, the crashed round's events again.
	relayCfg.Sink = producer
	relay2, err := outbox.New(relayCfg)
	if err != nil {
		return err
	}
	go func() { relayed <- relay2.Run(ctx) }()
	select {
	case <-consumed.done:
	case <-ctx.Done():
		return fmt.Errorf("the consumer applied %d of %d events: %w", consumed.applied, total, ctx.Err())
	}
	if err := relay2.Close(ctx); err != nil {
		return err
	}
	if err := <-relayed; err != nil {
		return err
	}
	sent := relay2.Stats().Sent

	owner, err := book.balances(ctx, store.DB())
	if err != nil {
		return err
	}
	for range outboxWriters * outboxHotEach {
		want[outboxHot] += 3
	}
	equal, versioned := 0, 0
	consumed.mu.Lock()
	for account, w := range want {
		if owner[account] == w && consumed.balances[account] == w {
			equal++
		}
		if v, _ := store.OutboxVersion(ctx, accounts.Entity(), account); v == consumed.versions[account] && v > 0 {
			versioned++
		}
	}
	gaps := consumed.gaps
	consumed.mu.Unlock()
	skipped := d.Stats()["Account"].Skipped
	fmt.Fprintf(out, "outbox   %d accounts + %s (%d writers at once), %d transactions, each writing a balance and its event\n", outboxAccounts, outboxHot, outboxWriters, total)
	fmt.Fprintf(out, "         (AccountOutbox.Publish...Tx: the version comes from the outbox's sequence, in the transaction)\n")
	fmt.Fprintf(out, "relay    to Kafka (kfake): the first relay crashed between send and mark after sending %d events, %d of them not marked;\n", first.sent.Load(), sentUnmarked)
	fmt.Fprintf(out, "         the next relay sent %d, those %d again: the consumer's version guard skipped %d copies\n", sent, sentUnmarked, skipped)
	fmt.Fprintf(out, "balances %d of %d accounts: the owner's table, the consumer and in-order application agree; %d at the outbox's last version, %d out of order\n",
		equal, len(want), versioned, gaps)
	if equal != len(want) || versioned != len(want) || gaps != 0 || int(skipped) != sentUnmarked || sentUnmarked == 0 {
		return fmt.Errorf("the consumer differs from the owner: %d of %d balances equal, %d versions equal, %d gaps, %d skipped for %d sent again",
			equal, len(want), versioned, gaps, skipped, sentUnmarked)
	}
	return nil
}

// writeOutbox writes every entry, each account's in order, from
// outboxWriters writers, who also deposit 3 into outboxHot at once: the
// outbox numbers its events consecutively whoever writes.
func writeOutbox(ctx context.Context, db *sql.DB, book *producerBook, accounts *ledger.AccountOutbox, seq []entry) error {
	if err := book.write(ctx, db, accounts, entry{account: outboxHot, kind: "open"}); err != nil {
		return err
	}
	byAccount := map[string][]entry{}
	var order []string
	for _, e := range seq {
		if byAccount[e.account] == nil {
			order = append(order, e.account)
		}
		byAccount[e.account] = append(byAccount[e.account], e)
	}
	errs := make([]error, 2*outboxWriters)
	var wg sync.WaitGroup
	for w := range outboxWriters {
		wg.Go(func() { // the accounts of writer w, each in order
			for i, account := range order {
				if i%outboxWriters != w {
					continue
				}
				for _, e := range byAccount[account] {
					if err := book.write(ctx, db, accounts, e); err != nil {
						errs[w] = err
						return
					}
				}
			}
		})
		wg.Go(func() { // and its deposits into outboxHot, beside the others'
			for range outboxHotEach {
				if err := book.write(ctx, db, accounts, entry{account: outboxHot, kind: "deposit", amount: 3}); err != nil {
					errs[outboxWriters+w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
