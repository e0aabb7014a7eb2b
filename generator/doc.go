// Package generator compiles an ordergen schema into Go code. It is the
// library behind the ordergen command; its stages are separate packages:
//
//	schema    load the YAML text, strictly, keeping every position
//	validate  check the meaning and build the resolved model (ir)
//	ir        the resolved model: defaults applied, types resolved
//	emit      write the Go files with jennifer, one per concern
//	write     put the files into the output directory, or diff them
//
// Beside the pipeline: emit/testkit writes the test kit, docs the Markdown
// catalogue, asyncapi the AsyncAPI 3.0 document, breaking compares two
// versions of a schema, jsonschema holds the JSON Schema of schema files
// and scaffold the files of ordergen init.
//
// # Schema
//
// A schema is one YAML document:
//
//	version: 1                 # required; the only version this ordergen reads
//	package: ledger            # required; a lower-case Go identifier, not a keyword
//	doc: The bank's ledger.    # optional, as on entities, states, events and fields
//	out: ledger                # optional; the output folder, relative to the schema
//	wire_names: go             # optional; or snake_case, camelCase
//	defaults:                  # optional; every entity inherits them
//	  delivery: at-least-once  # or at-most-once
//	  retry: {attempts: 5, initial: 10ms, max: 2s, multiplier: 2, jitter: full}
//	  timeout: 5s
//	  on_exhausted: park       # or dead-letter
//	  backlog: {per_key: 1000, total: 100000, when_full: reject, wait: 200ms}
//	  lanes: {max_active: 256}
//	  resequencer: {max_events: 64, max_wait: 30s}
//	entities:
//	  Account:
//	    doc: A bank account.
//	    key: {field: AccountID, type: string, wire: account_id}
//	    version: {field: Version, type: uint64}
//	    states: [Open, Frozen: {doc: No withdrawals.}, Closed]
//	    branches: {Suspended: {from: [Open], doc: Under review.}}
//	    conflate: false
//	    on_gap: resync         # or park (the default); needs a version
//	    wire_names: go         # overrides the file's rule
//	    retry: {attempts: 8}   # any default, overridden field by field
//	    group: {max_events: 512, linger: 2ms}  # transactional subscribers commit many keys at once
//	    brokers: {kafka: ledger.accounts, sqs: ledger-accounts.fifo}  # where its events travel
//	    events:
//	      AccountOpened: {fields: {Owner: string}, kind: snapshot, to: Open}
//	      Deposited: {fields: {Amount: {type: int64, wire: amount, doc: In cents.}}, doc: Money paid in.}
//	      AccountNoted: {fields: {Text: string}, in: [Open, Frozen]}  # within states, without moving
//	  Wallet:
//	    key: {field: WalletID, type: string}
//	    version: {field: Version}
//	    batch: {max_events: 64, linger: 5ms}  # the handler takes batches
//	    events:
//	      Credited: {fields: {Amount: int64}}
//	  Profile:
//	    key: {field: UserID, type: string}
//	    notification: true     # events only say "key changed"
//	    events:
//	      ProfileChanged: {}
//
// doc: describes what it is on, for people: a sentence (or paragraphs)
// that goes into the generated Go comments (a field's replaces the
// generated "Amount is declared in the schema as int64."; the schema's goes
// into the package comment), the catalogue of ordergen docs and the editor's
// hover text. A state is written as its name, or as Name: {doc: ...} to
// describe it. ordergen breaking ignores docs.
//
// States rank forward only. With a version, duplicates are the version
// guard's to decide: the state guard skips only a move (to:) to a state
// ranked strictly below the current one (late), and a second event to the
// current state with a newer version applies. Without a version, a move to
// the current state is skipped as a duplicate, and the generated comment of
// each such event says so. An event with in: [states] happens within those
// states without moving the entity (a scan, a position update): it applies
// only while the entity is in one of them and is skipped, with a reason,
// otherwise. A branch state is entered only from the states its from:
// lists, and no ranked state follows it.
//
// out is where ordergen generate and check write by default (their -out
// wins): a folder relative to the schema's. Without it, the code goes into
// the folder named after the package beside the schema, so that the
// import path ends in the package's name.
//
// Wire names are the names of fields in encoded events (the JSON codec's,
// so parked events and transports). By default a field's wire name is its
// Go name, as events encoded before wire names existed have them;
// wire_names sets a rule for all the fields of the file or of one entity
// (snake_case makes AccountID account_id; camelCase makes it accountId), and
// a field's, key's or version's own wire: wins over the rule. ordergen
// breaking reports a changed wire name (WIRE_NAME_SAME).
//
// brokers: names the brokers that carry an entity's events between
// processes, each with the name of what they travel through there: kafka
// (the topic), rabbitmq (the Name of a runtime/rabbitmq Topology, which
// names its consistent-hash exchange and queues), pubsub (the topic's ID)
// and sqs (a FIFO queue, whose name ends in .fifo). The generated code
// does not read it (a transport is set up in code): ordergen asyncapi
// writes a channel per entity and broker from it, with the bindings that
// carry the key, and ordergen breaking reports a name changed or a broker
// removed (BROKER_ADDRESS_SAME).
//
// The values shown for defaults are the built-in ones, used for whatever a
// schema leaves out (backlog.wait has none): the runtime's own defaults,
// which live in github.com/ordergen/ordergen/runtime's Default constants
// and which a zero runtime.Config field takes too. on_exhausted and
// when_full take the names of the runtime's ExhaustedPolicy and FullPolicy
// values. Policies merge field by field:
// an entity's retry: {attempts: 8} keeps the other retry settings of the
// defaults.
//
// Policy values: attempts, per_key, total, max_active and max_events are
// whole numbers of at least 1; multiplier is a number from 1 to 1000;
// initial, max, timeout, wait and max_wait are positive Go durations
// (250ms, 5s, 1m30s); group.linger is a Go duration of zero or more (0,
// 2ms); jitter is full or none; when_full is reject, block, drop-oldest,
// drop-newest or timeout.
//
// group: {max_events, linger}, on an entity or in defaults:, turns on group
// commit, and only for transactional subscribers (NewAccountTxDispatcher,
// SubscribeTx); the others are unchanged. Such a subscriber hands its keys'
// work to a runtime/groupcommit Committer, which commits the work of many
// keys, up to max_events events (default 1000, groupcommit's), in one
// transaction of the store, waiting up to linger (default 0: no wait) for
// more keys; the store must implement durable.GroupTxStore (runtime/sqlstore
// does), or SubscribeTx fails. A key is in at most one open group and its
// events are applied in order. Given at all, even as group: {}, it is on.
// The generated AccountConfig's Group field holds the values
// (a groupcommit.Config), for code to change.
//
// # Handling patterns
//
// By default an entity's handler gets its events one at a time, in order,
// and a key whose held events pass the resequencer's bound is parked. Three
// keys of an entity (not of defaults:) change that, each trading one thing
// for another:
//
//   - on_gap: resync (park is the default) resyncs a key whose resequencer
//     bound is hit instead of parking it: the handlers gain the method
//     ResyncAccount(ctx, key) (AccountSnapshot, error), which brings the
//     handler's data of key up to date from the source of truth and returns
//     the version (and state) it reached. The guards store them, skip the
//     held events they cover and apply the later ones in order; the resync
//     is counted (Stats.Resynced, the ordergen.resyncs metric) and logged
//     with the key, the gap and what it dropped. A failing resync is
//     retried with the entity's retry policy, then the key parks as
//     without it. A lost event then costs a read of the source instead of
//     an operator.
//   - batch: {max_events, linger} gives the handlers one method,
//     HandleWalletBatch(ctx, key, events []WalletEvent), instead of one per
//     event: the pending events of one key, up to max_events (default 64,
//     at most backlog.per_key), gathered for up to linger (default none).
//     The guards decide each event first: duplicates and stale events are
//     left out, a delta after a gap is held back (the batch never spans a
//     gap), the state guard's skips are left out; the version advances once, to
//     the last event decided, and a transactional handler's batch is one
//     transaction. Throughput is paid for with latency.
//   - notification: true makes the events notifications: they carry only
//     the key, the handlers have one method, HandleProfileChanged(ctx,
//     key), that fetches the key's current state from its owner, and the
//     notifications of a key that arrive while it is busy are coalesced
//     into one call. There is no version guard and order does not matter;
//     the entity pays a read per call and depends on the owner being up.
//
// Field types are Go's predeclared types (every one but the interfaces
// any, comparable and error), time.Time, time.Duration, compositions []T,
// *T and map[K]V of allowed types (K comparable; at most 16 levels of
// them, one each), and types of other
// packages written import/path.Type (github.com/shopspring/decimal.Decimal),
// which must resolve, from the schema's directory, to an exported type
// that needs no type arguments. A key is a string or an integer type; a
// version is an integer type (uint64 when the schema gives none).
//
// # Rules
//
// Every problem is reported, each as path:line:col: message, sorted by
// position. Besides malformed YAML, unknown and duplicate keys, missing
// required keys, wrong value types and the value ranges above, these are
// errors:
//
//   - version other than 1; a package name that is not a lower-case Go
//     identifier or is a keyword.
//   - an entity, event, field, state, branch, key or version field name that
//     is not an exported Go identifier.
//   - names that clash in the generated package or in its test kit: an
//     event named like another entity's event or like a generated
//     declaration (AccountEvent, AccountHandler, AccountDispatcher,
//     AccountConfig, AccountOption, AccountPublisher, AccountTxHandler,
//     AccountProducer, AccountCodec, AccountOutbox, AccountState and its
//     constants AccountStateOpen..., AccountSubscriberName,
//     AccountFirstSubscriber, AccountSubscriberNamed, the bases
//     UnimplementedAccountHandler and UnimplementedAccountTxHandler,
//     NewAccountDispatcher, NewAccountTxDispatcher, NewAccountProducer,
//     NewAccountOutbox and the unexported
//     helpers), or two entities whose generated names meet (entities NewA
//     and A both give NewADispatcher; in the kit, SequenceA and ARecorder
//     both give SequenceARecorder). The names are those of package ir's
//     Names, the one place they are made;
//     an event field named like the key or version field or like a
//     generated method (EventName, EventKey, EventVersion); a version field
//     named like the key field. Each clash is reported at the later of the
//     two declarations.
//   - an entity without key, key.field or key.type, or without events; a
//     version without field.
//   - an unusable key type (floats, bool, []byte, time.Time, qualified
//     types: anything but string and the integer types) or version type
//     (anything but the integer types).
//   - an unknown field type or a qualified type that does not resolve.
//   - a duplicate state; a branch also declared as a state; a branch with
//     an empty from:, or whose from: names an undeclared state, itself, or
//     one state twice; branches on an entity without states.
//   - to: on an entity without states, or naming an undeclared state.
//   - in brokers:, a broker other than kafka, rabbitmq, pubsub and sqs, or
//     none; a name that is not text or that the broker does not take (a
//     Kafka topic of 1 to 249 letters, digits, ., _ and -; a topology name
//     of at most 250 bytes, not starting with amq.; a Pub/Sub topic ID of 3
//     to 255 characters starting with a letter, not with goog; an SQS FIFO
//     queue); a name another entity gives on the same broker.
//   - in: on an entity without states, empty, naming an undeclared state or
//     one state twice, or naming only states that no event moves the entity
//     to (the event would always be skipped; unless on_gap: resync, whose
//     source of truth may set any state); to: and in: on one event.
//   - out: that is not a folder inside the schema's folder; wire_names other
//     than go, snake_case or camelCase; a wire: name that a JSON key in a
//     struct tag cannot be (letters, digits, _, . and -, not first); two
//     fields of an event (key and version included) with one wire name,
//     ignoring case.
//
// A misspelt key, type, state or value is reported with the closest known
// name, when one is close ("did you mean states?"), and a tab, which YAML
// does not allow for indentation, is named at its column. A line indented
// so that it belongs to no mapping or list above it is reported at that
// line (not where the mapping it broke starts, as YAML parsers do), with
// the indentations it could have. One mistake gets
// one error: what follows from a misspelt key's absence (a missing key,
// events moving to the states a misspelt states: would have declared) is
// not reported again, events moving to states an entity lacks are reported
// once, a policy written on an event says that it belongs on the entity or
// in defaults:, and a type named as other languages name it (integer,
// double, timestamp) gets Go's (int64, float64, time.Time).
//
// And these combinations, which make no sense:
//
//   - kind: (snapshot or delta) on an entity without a version: the kind
//     only says how an event crosses a version gap.
//   - conflate: true on an entity with a version whose events are not all
//     snapshots: conflation replaces pending events, which leaves version
//     gaps that a delta cannot survive.
//   - resequencer: on an entity without a version: nothing is ever held.
//   - on_gap on an entity without a version, or on_gap: resync on one whose
//     events are all snapshots (none is ever held); on_gap in defaults:.
//   - batch together with conflate: true (conflation replaces pending
//     events one by one, a batch takes them all); batch.max_events above
//     backlog.per_key.
//   - notification: true together with a version, states, conflate,
//     on_gap, batch or event fields: a notification carries only its key.
//   - delivery: at-most-once together with retry: or on_exhausted: in the
//     same scope (or in an entity whose defaults say at-most-once): an
//     at-most-once event gets one attempt and is dropped when it fails.
//   - backlog when_full: timeout without wait:, and wait: with any other
//     when_full.
//   - retry initial above max; backlog per_key above total.
//
// # Generated code
//
// For each entity (Account with key AccountID string below), the files
// of one package hold:
//
//   - events.go: one struct per event (key field, version field, then the
//     declared fields) and the sealed interface AccountEvent with
//     EventName, EventKey and EventVersion; for an entity with states, the
//     typed state AccountState (a string type: "" is no state yet) with a
//     constant per state (AccountStateOpen, ...) and String.
//   - handlers.go: AccountHandler, one HandleX(ctx, X) error per event (for
//     batch: one HandleAccountBatch(ctx, key, []AccountEvent) error; for
//     notification: true one HandleAccountChanged(ctx, key) error; with
//     on_gap: resync also ResyncAccount(ctx, key) (AccountSnapshot, error),
//     and the type AccountSnapshot), and
//     UnimplementedAccountHandler, a base to embed so that a handler keeps
//     compiling when the schema gains events (the gRPC Unimplemented
//     pattern): its methods return runtime.ErrUnimplemented, for which the
//     guards advance the key's version and state as for a handled event
//     and count the event as skipped, with the reason "unimplemented".
//     Without the base a new event breaks every handler at compile time,
//     which stays the default.
//   - dispatchers.go: the handshake with the runtime (see below);
//     accountBody, which carries an event through the engines when the
//     entity's events travel by value (see below); accountEntity, the
//     entity's description for runtime/genimpl (its names, ranked and
//     branch states, each event's kind, target state and in: states, the
//     schema's policies, and the functions that fill a body and read its
//     event, kind and version back); AccountConfig and AccountOption,
//     aliases of genimpl.Config and genimpl.Option (the policies, the
//     stores, OnOutcome, OnSkip); AccountDispatcher, which embeds a
//     genimpl.Dispatcher, with NewAccountDispatcher, Subscribe and, as the
//     entity has them, Version(ctx, subscriber, key) and State(ctx,
//     subscriber, key), which read what the subscriber's guards stored; and
//     accountHandler, which adapts an AccountHandler to genimpl's guards (a
//     switch on the body's kind to its typed methods). The embedded genimpl.Dispatcher
//     brings Publish (any AccountEvent), Flush, Close, Replay, Discard,
//     ParkedKeys, ParkedEvents, Health, TopBacklog, Stuck, Stats, Inspector
//     (the operator's view for runtime/console) and, for transports,
//     SubmitTagged, Withdraw and Subscriptions. Every subscriber has its
//     own runtime engine (lanes), stores and guards, and a typed name,
//     AccountSubscriberName: the first is AccountFirstSubscriber
//     ("Account"), the others AccountSubscriberNamed(name)
//     ("Account/"+name). Version, State and ParkedEvents take that name, and
//     Stats, ParkedKeys, TopBacklog and Stuck are maps keyed by it; a name
//     that is no subscriber's is an error that names the one differing only
//     in case, or every subscriber. The guards are genimpl's, the same for every entity, driven by the
//     description: the version guard skips an event whose version is not
//     above the stored one, applies the next one, and on a gap applies a
//     snapshot and holds a delta back (runtime.Hold) until the gap fills or
//     the resequencer's bounds resync or park the key. The state guard
//     skips a move to a state ranked below the current one, a branch state
//     entered from a state its from: does not list, any ranked transition
//     out of a branch state, and an event with in: while the entity is in
//     none of its states; a move to the current state applies with a
//     version and is skipped as a duplicate without one (the first such
//     skip logged once, at debug level). A skipped event still uses up its
//     version, and every guard's skip is told to the config's OnSkip. The
//     stores are updated after the handler succeeds, state first, then
//     version, by compare-and-set; a failed compare-and-set is an error.
//     For batch: the same guards decide each event of a batch. Events
//     travel through the engine in the entity's body alone: by value
//     (accountBody, a field per event, and the event's kind when the
//     entity has several) when the entity's events are small together (at
//     most 128 bytes, estimated from their fields), so that publishing one
//     allocates nothing and a queued event costs no header beside it;
//     otherwise boxed (genimpl.Boxed, with the event's kind and version),
//     so that a queued event holds its own struct and no other.
//   - publishers.go: AccountPublisher and the dispatcher's typed PublishX
//     methods, which refuse an empty string key or a version below 1 with
//     runtime.ErrInvalidEvent (genimpl's Publish does, for any
//     AccountEvent).
//   - durable.go: AccountTxHandler, one HandleX(ctx, tx *sql.Tx, X) error
//     per event, its UnimplementedAccountTxHandler base, and
//     NewAccountTxDispatcher and the dispatcher's SubscribeTx, which take
//     one with a genimpl.TxStore (a durable.TxStore[*sql.Tx], such as
//     runtime/sqlstore's Store): the guard then begins a transaction, reads
//     (and locks) the key's version and state in it, decides, calls the
//     handler with the transaction and commits the handler's writes with
//     the new version and state (effectively once). AccountConfig.Store
//     keeps any subscriber's versions, states and parked events in a
//     durable store, in the namespace of the subscriber's name
//     (at-least-once: the version is stored after the handler). With
//     group:, the store must be a durable.GroupTxStore and a transactional
//     subscriber hands each key's pending events to a groupcommit.Committer
//     instead: the same guards decide each event in a transaction shared
//     with other keys' work, which commits once for the group.
//   - transports.go: AccountProducer (NewAccountProducer), which embeds a
//     genimpl.Producer: it implements AccountPublisher over any
//     transport.Sink[string, AccountEvent] (genimpl.Sink), such as the
//     Kafka producer of runtime/kafka, refusing what the dispatcher's
//     Publish methods refuse, so that code generated for users without
//     Kafka never imports it.
//   - outbox.go: AccountOutbox (NewAccountOutbox over a
//     genimpl.OutboxStore, runtime/sqlstore's Store), which embeds a
//     genimpl.Outbox, the transactional outbox: PublishXTx(ctx, tx *sql.Tx,
//     X) (uint64, error) per event, and PublishTx for any AccountEvent,
//     append the event in the caller's transaction, so that it commits with
//     the change it announces or not at all. Each takes the key's next
//     version from the outbox's own sequence, stamps it into the event's
//     version field (an entity without one gets the number for ordering
//     only), and returns it; Seed starts a key's sequence after the
//     versions a service numbered before it adopted the outbox, and Entity
//     is the name the relay of runtime/outbox ships the events under.
//   - codecs.go: AccountCodec, a durable.Codec that encodes an event as a
//     JSON object named by its schema name, for durable park stores and
//     transports. Decoding ignores unknown fields (a newer schema's added
//     fields) and refuses an unknown name with durable.ErrUnknownEventType.
//
// Generated code imports two of ordergen's packages: runtime (the
// handler's door: errors, policies, stores) and runtime/genimpl (the
// wiring, which only generated code imports). Its handshake states the
// version of genimpl it needs, and genimpl the range it runs, so that code
// and runtime of mismatched versions fail to compile with a message that
// says which to upgrade (CONTRIBUTING.md says when to bump).
//
// With Options.ImportPath (ordergen generate sets it inside a Go module),
// the test kit is generated too: package ledgertest in the sub-directory
// ledgertest, with AccountRecorder, AccountHarness, AccountDelivery,
// ApplyAccountInOrder (which fails when the guards skip an event in
// publication order) and, for an entity with a version, SequenceAccount;
// see package emit/testkit.
package generator
