// Package kafka is for services on Kafka: it carries ordergen events across
// processes with github.com/twmb/franz-go: a Producer that writes each event
// keyed by its ordering key, and a Consumer that runs a consumer group and
// feeds each partition's records to per-key lanes, so that within a partition
// different keys run in parallel while each key keeps its order.
//
// Kafka is the first implementation of the runtime's transport contract:
// the Producer is a transport.AsyncSink built on transport.OrderedSink, and the
// Consumer settles its records through a transport.Source. Code that ordergen
// generates never imports this package (users without Kafka never build
// franz-go): a generated AccountProducer publishes to any transport.Sink, and
// a generated AccountDispatcher is a transport.Target.
//
// # Producing
//
//	cl, _ := kgo.NewClient(kgo.SeedBrokers(brokers...))
//	sink, _ := kafka.NewProducer[string, ledger.AccountEvent](cl, "accounts", ledger.AccountCodec{})
//	p, _ := ledger.NewAccountProducer(sink)
//	err := p.PublishDeposited(ctx, ledger.Deposited{AccountID: "a-1", Version: 2, Amount: 100})
//	p.PublishAsync(ctx, ledger.Deposited{AccountID: "a-1", Version: 3, Amount: 5}, func(err error) { ... })
//
// A record's key is the event's key (durable.EncodeKey), its value the
// codec's encoding, its HeaderType header the event type. The client's
// idempotent writes (which NewProducer requires) keep retries from
// reordering or doubling a key's records. PublishAsync does not wait for
// the broker; once a send of a key fails, the key's later sends fail at
// once (transport.ErrKeyPaused) until Producer.Resume(key), so that a key's
// later event never lands after a gap nobody dealt with. Flush waits for
// the sends in flight.
//
// Partitions: a key's partition is murmur2 of the key, high bit masked,
// modulo the partition count: the Java client's default, and franz-go's
// (Partition computes it). The client decides it, and NewProducer checks
// that it does: a client configured with a partitioner that places keyed
// records otherwise (round robin, sticky, manual, another hash) or only
// among the partitions writable at the moment is refused with ErrInvalidConfig,
// since it would silently break per-key order. Adding partitions to a
// topic remaps keys: a key's records after the change go to another
// partition than those before it, and a consumer may run them before the
// earlier ones. Create topics with the partitions they will need, or stop
// the producers and let the consumers drain the topic before adding some.
//
// # Consuming
//
//	c, _ := kafka.NewConsumer[string, ledger.AccountEvent](kafka.Config[ledger.AccountEvent]{
//		ClientOpts:      []kgo.Opt{kgo.SeedBrokers(brokers...)},
//		Group:           "ledger",
//		Topics:          []string{"accounts"},
//		Codec:           ledger.AccountCodec{},
//		DeadLetterTopic: "accounts.dlt",
//	})
//	d, _ := ledger.NewAccountDispatcher(h, func(cfg *ledger.AccountConfig) { cfg.OnOutcome = c.OnOutcome })
//	go func() { <-stop; c.Close(shutdownCtx) }()
//	err := c.Run(ctx, d)
//
// Every subscriber of the dispatcher needs OnOutcome: a record is finished
// when every subscriber that accepted it reported a final outcome. Before it
// joins the group, Run refuses (ErrInvalidConfig) subscribers under the
// drop-oldest or drop-newest backlog policy (a dropped event would report
// an outcome that finishes its record, and the commit would pass a record
// no handler ran: the consumer pauses the partition when the lanes are full
// instead), subscribers without OnOutcome, and subscribers that park
// differently (some in memory, some in a store).
//
// # Commits
//
// The consumer commits itself (franz-go's autocommit is off, as its own
// commits would overwrite the metadata), every Config.CommitInterval, on
// revoke and on Close, with an OffsetCommit request built with kmsg that
// carries the group's generation and member ID. Each partition is committed
// at its lowest unfinished offset; the offsets above it that are finished
// go into the commit metadata, so that the next owner (a restart, another
// member) skips them instead of running them again. Only offsets the
// consumer took are tracked: offsets with no record (compaction,
// transaction markers) count as finished.
//
// The metadata is base64 (standard alphabet, no padding) of one format
// byte, 0x11 for a bitset or 0x12 for run lengths (high nibble: version 1),
// the committed offset C and the number L of offsets described (uvarints),
// then either a bitset of offsets C+1..C+L (LSB first) or uvarint run
// lengths, alternately finished (the first may be 0) and unfinished. The
// encoder writes the shorter form. A map whose C is not the committed
// offset, or that does not decode (another client's metadata), is ignored:
// its records run again, which is safe.
//
// The metadata of a partition is bounded by Config.MaxMetadataBytes
// (DefaultMaxMetadataBytes, 3072: 75% of the brokers' default
// offset.metadata.max.bytes, 4096). Before taking a record the consumer
// checks that the metadata would stay within the bound however the
// records in flight finish (the bitset up to that offset, or the runs plus
// two per unfinished record); if not, it pauses the partition (see Paused
// partitions). A map cut to the bound anyway lists a prefix of the
// finished offsets: what it leaves out runs again.
//
// # Ownership and fencing
//
// An ownership is one unbroken holding of a partition by the consumer, from
// its assignment to its revocation or loss; a cooperative rebalance that
// lets the consumer keep a partition keeps its ownership, and a partition
// that comes back (after it was lost, say) starts a new one. Every record
// is taken under its partition's ownership, and when the ownership ends:
//
//   - its records that have not started are withdrawn from the lanes
//     (runtime.Engine.Withdraw) and never start here: queued, waiting for
//     a retry, held, or parked in memory (the next owner sees them again);
//   - on revoke (and on Close), the consumer waits up to
//     Config.RevokeTimeout for the running ones to finish, then cancels
//     their handlers' contexts and waits a quarter second more for them to
//     return; it commits what finished, and only then lets franz-go release
//     the partition, so the next owner starts right after what finished
//     and runs nothing twice;
//   - on loss (the member was fenced: another member may own the partition
//     already) the running handlers are cancelled at once and nothing is
//     committed;
//   - outcomes that arrive later are ignored.
//
// So no handler starts for a record of a partition after the partition
// moved to another member or came back under a new ownership. A handler
// that ignores its context's cancellation keeps running, though, and can
// overlap with the new owner's handler of the same key: keep handlers
// responsive to cancellation, and let the version guard skip what the
// overlap delivers twice. Rebalances wait while the consumer hands over
// the records of one poll (franz-go's BlockRebalanceOnPoll; handing over
// never blocks), so every record taken belongs to its partition's current
// ownership.
//
// What a handler sees when its partition's ownership ends before it
// returns: its context is cancelled (at once on loss, after
// Config.RevokeTimeout on revoke and Close), and context.Cause returns an
// error wrapping transport.ErrOwnershipEnded that says which partitions
// went and why (or, when the context of Close or of the rebalance ended
// first, that context's cause). Kafka has no lease a consumer extends: a
// member cut off from the cluster keeps its partitions until its session
// times out (the cluster then gives them to others, and the member, once
// it hears of it, loses them), so its handlers can overlap with the next
// owner's for that long; the version guard skips what is applied twice.
//
// # Stopping
//
// Close and the end of Run's context (see Run) end every ownership, then
// the consumer leaves the group and closes its client, trying no longer
// than Close's context and RevokeTimeout allow (a second when Run's
// context ended): a consumer cut off from the cluster still stops in time,
// and its partitions move to the others when its session times out.
//
// # Backpressure
//
// At most Config.MaxInFlight records are taken and unfinished at once,
// parked ones included; at the limit the consumer stops polling (franz-go
// buffers at most one fetch per broker). A record the lanes refuse for lack
// of room (any backlog policy: the consumer submits with a done context, so
// block and timeout refuse at once) waits, with the records after it in
// its partition, and the partition pauses (PausedBacklog) until an outcome
// makes room. Nothing is buffered without bound and a full key holds up
// only its own partition.
//
// # Parked keys
//
// Retries are bounded (the schema's retry policy) and a key whose event
// fails for good is parked: its later events join the park, other keys go
// on. Whether the commit may pass a parked record depends on where the
// park lives, which the consumer learns from the subscribers
// (transport.Subscription). With a park store (a durable one), a parked
// record is finished: the store keeps it, and the commit moves on. With
// the in-memory park (the default) the park dies with the process, so a
// parked record stays unfinished: the partition is committed up to it and
// the finished offsets after it go into the metadata. Resolving the park
// in process finishes its records: Replay reports each replayed event's
// outcome, Discard reports them dropped, with their records' tags, and the
// commit moves past them.
//
// # Paused partitions
//
// A partition pauses (its fetching stops; other partitions go on) for one
// of two reasons, each logged with the partition, its committed offset, its
// unfinished records and the age of the oldest:
//
//   - PausedBacklog (logged at debug level): the lanes refused a record for
//     lack of room. It resumes by itself as soon as records finish.
//   - PausedMetadata (logged as a warning): taking the next record could
//     let the commit metadata pass its bound, because too many records
//     above the lowest unfinished one are unfinished. With the in-memory
//     park these are parked records, and the partition resumes (logged at
//     info level) when their parks are resolved: Replay or Discard of the
//     keys the dispatcher's ParkedKeys lists. A park store avoids the pause.
//
// Records parked in memory also count against Config.MaxInFlight, over
// all partitions: when the consumer waits for room and parked records
// hold half of MaxInFlight or more, it stops taking records on every
// partition until their parks are resolved, and says so (a warning, then
// an info line when it takes records again; Stats.Intake is IntakeParked;
// ordergen.kafka.intake.blocked is 1 with reason "parked").
//
// Meanwhile an operator sees why: Stats (Paused, PausedMetadata, Intake,
// Parked, InFlight), Partitions (per partition: the reason, the committed
// offset, the lag, the unfinished and parked records, the age of the
// oldest unfinished one) and the metrics ordergen.kafka.paused and
// ordergen.kafka.intake.blocked (by reason), ordergen.kafka.parked,
// ordergen.kafka.unfinished, ordergen.kafka.unfinished.oldest_age and
// ordergen.kafka.lag.
//
// # Metrics
//
// With Config.MeterProvider (runtime/otelmetrics adapts OpenTelemetry) the
// consumer records, under the instrumentation scope of this package, the
// instruments of the Metric constants: records consumed and commit
// durations under OpenTelemetry's messaging names
// (messaging.client.consumed.messages, messaging.client.operation.duration
// with messaging.operation.name "commit" and error.type on failures), and
// ordergen's own: lag, unfinished records and the age of the oldest,
// parked records, paused partitions by reason and commit metadata size per
// partition (attributes messaging.destination.name and
// messaging.destination.partition.id), dead-lettered records by reason,
// and rebalances by kind.
//
// # Bad records and dead letters
//
// A record that cannot be handled goes to Config.DeadLetterTopic with its
// key, value and headers, plus HeaderReason (a Reason), HeaderError,
// HeaderTopic, HeaderPartition, HeaderOffset and HeaderGroup, is counted,
// and is finished once the write is acknowledged: the partition never
// stops. Reasons: ReasonMissingType, ReasonUnknownType, ReasonUndecodable,
// ReasonMissingKey, ReasonKeyMismatch (the record key is not the event's
// key) and ReasonInvalidEvent (the dispatcher refused it: an empty key, a
// version below 1). If the write fails, the record stays unfinished here
// (the next owner offers it again). For handlers that fail for good under
// the runtime.SendToDeadLetter policy, DeadLetters writes to a topic with
// ReasonHandlerFailed.
//
// # Records without a key
//
// The record key is the ordering key. A record without one was not
// partitioned by key, so its partition says nothing about its order: by
// default it goes to the dead-letter topic (ReasonMissingKey) instead of
// forming one serial lane of all keyless records. With
// Config.AcceptKeyless it is ordered by its event's key, and its order is
// kept only against the records of its own partition.
//
// # Compared with the Parallel Consumer
//
// Confluent's Parallel Consumer is the JVM library for key-level
// concurrency on Kafka. Its users' main complaints, and what this package
// does instead:
//
//   - Stalls after a rebalance (its issue 857): a resolved park finishes
//     its records and resumes its partition, and an ownership's leftovers
//     are withdrawn, not left holding the partition's progress.
//   - Duplicates on rebalance, in-flight work not drained before the final
//     commit (365, 777): on revoke the records that have not started are
//     withdrawn (they never run here), the running ones are waited for,
//     then the commit goes out, before the partition is released.
//   - A commit that skipped a polled record on revoke (826): a partition is
//     committed at its lowest unfinished offset, and only finished offsets
//     go into the metadata.
//   - Retries forever, no maximum, no dead letter, filling the intake until
//     everything freezes (196, 310): retries are bounded, then the key parks
//     (or dead-letters, per the schema); a park in memory holds up only its
//     own partition, which pauses visibly at the metadata bound, and a park
//     store holds up nothing.
//   - A deserialisation error killing the poll loop (550): bad records go
//     to the dead-letter topic with the reason, and the partition goes on.
//   - Records without a key forming one serial lane (183): they are
//     dead-lettered by default, or ordered by their event's key with
//     Config.AcceptKeyless.
package kafka
