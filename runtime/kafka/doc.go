// Package kafka carries ordergen events across processes on Kafka, with
// github.com/twmb/franz-go: a Producer that writes each event keyed by its
// ordering key, and a Consumer that runs a consumer group and feeds each
// partition's records to per-key lanes, so that within a partition
// different keys run in parallel while each key keeps its order.
//
// Code that ordergen generates never imports this package (users without
// Kafka never build franz-go): a generated AccountProducer publishes to any
// runtime.Sink, which Producer implements, and a generated
// AccountDispatcher is a Target through its SubmitTagged method.
//
// # Producing
//
//	cl, _ := kgo.NewClient(kgo.SeedBrokers(brokers...))
//	sink, _ := kafka.NewProducer[string, ledger.AccountEvent](cl, "accounts", ledger.AccountCodec{})
//	p, _ := ledger.NewAccountProducer(sink)
//	err := p.PublishDeposited(ctx, ledger.Deposited{AccountID: "a-1", Version: 2, Amount: 100})
//
// A record's key is the event's key (runtime.EncodeKey), its value the
// codec's encoding, its HeaderType header the event type. franz-go's
// default partitioner hashes the key, so a key's events share a partition,
// and its idempotent writes (which NewProducer requires) keep retries from
// reordering or doubling them.
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
// Every subscriber of the dispatcher needs OnOutcome (SubmitTagged refuses
// to run otherwise): a record is finished when every subscriber that holds
// it reported an outcome that lets the commit move past it.
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
// two per unfinished record); if not, it pauses the partition until records
// finish. Other partitions go on. A map cut to the bound anyway lists a
// prefix of the finished offsets: what it leaves out runs again.
//
// # Rebalances
//
// On revoke (and on Close) the consumer stops feeding the partitions, drops
// the records it had not handed over yet, waits up to Config.RevokeTimeout
// for the records in flight to finish, commits, and only then lets franz-go
// release the partitions: in the normal path no record of a revoked
// partition runs in two processes at once, and the next owner starts right
// after what finished. Records still running after the timeout are not
// committed and run again on the next owner (the version guard skips them
// there if they finished here). On lost partitions (the member was fenced)
// it commits nothing: another member may own them already; their records in
// flight are abandoned and their outcomes ignored. Rebalances wait while
// the consumer hands over the records of one poll (franz-go's
// BlockRebalanceOnPoll; handing over never blocks), so every record taken
// belongs to its partition's current assignment.
//
// # Backpressure
//
// At most Config.MaxInFlight records are taken and unfinished at once; at
// the limit the consumer stops polling (franz-go buffers at most one fetch
// per broker). A record the lanes refuse for lack of room (any backlog
// policy: the consumer submits with a done context, so Block and Timeout
// refuse at once) waits, with the records after it in its partition, and
// the partition's fetching is paused (PauseFetchPartitions) until an
// outcome makes room; then it resumes. Nothing is buffered without bound
// and a full key holds up only its own partition.
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
// the runtime.DeadLetter policy, DeadLetters writes to a topic with
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
// # Parked keys
//
// Retries are bounded (the schema's retry policy) and a key whose event
// fails for good is parked: its later events join the park, other keys go
// on. Whether the commit may move past a parked record depends on where the
// park lives. With the in-memory park store (the default) the park dies
// with the process, so a parked record stays unfinished: its partition is
// committed up to it, the finished offsets after it go into the metadata,
// and a restart or the next owner runs it again. Replaying it in process
// does not move the commit either: the consumer let go of the record when
// it was parked, so the replay's outcome (which carries the record's tag)
// finds no record and is ignored; the record runs again, and the version
// guard skips it, on the next owner. With a durable park store, set Config.CommitParked: a parked
// record is then finished, as the park keeps it. Many parked records in
// one partition can fill its metadata; the partition then pauses (logged as
// a warning) until they are resolved.
package kafka
