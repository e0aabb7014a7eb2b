package ir

import (
	"unicode"
	"unicode/utf8"
)

// Names are the Go identifiers generated for one entity, computed once from
// its name, as protogen computes a GoIdent for each message: every emitter
// (the package's, the test kit's, the transports') reads them here, and
// validate reserves each one (Decls), so that a generated name is always
// also checked for clashes. The comments give them for entity Account.
type Names struct {
	// Event is the sealed interface of the entity's events (AccountEvent).
	Event string
	// Seal is the unexported method that seals Event (isAccountEvent).
	Seal string
	// State is the typed state (AccountState); StateConst names its
	// constants.
	State string
	// Handler is the handler interface (AccountHandler).
	Handler string
	// UnimplementedHandler is Handler's embeddable base
	// (UnimplementedAccountHandler).
	UnimplementedHandler string
	// TxHandler is the transactional handler interface (AccountTxHandler).
	TxHandler string
	// UnimplementedTxHandler is TxHandler's embeddable base
	// (UnimplementedAccountTxHandler).
	UnimplementedTxHandler string
	// Dispatcher is the dispatcher (AccountDispatcher).
	Dispatcher string
	// NewDispatcher is its constructor (NewAccountDispatcher).
	NewDispatcher string
	// NewTxDispatcher is its constructor over a transactional store
	// (NewAccountTxDispatcher).
	NewTxDispatcher string
	// Config is a subscriber's configuration (AccountConfig).
	Config string
	// Option changes a Config (AccountOption).
	Option string
	// Publisher is the publisher interface (AccountPublisher).
	Publisher string
	// Producer is the publisher over a transport.Sink (AccountProducer).
	Producer string
	// NewProducer is its constructor (NewAccountProducer).
	NewProducer string
	// Codec is the JSON codec (AccountCodec).
	Codec string
	// Outbox writes events into the transactional outbox in the caller's
	// transaction (AccountOutbox).
	Outbox string
	// NewOutbox is its constructor (NewAccountOutbox).
	NewOutbox string
	// SubscriberName is the typed name of a subscriber, which the operator
	// methods take and key their maps by (AccountSubscriberName).
	SubscriberName string
	// FirstSubscriber is the name of the subscriber a dispatcher starts
	// with (AccountFirstSubscriber, "Account").
	FirstSubscriber string
	// SubscriberNamed makes the name of a subscriber added by Subscribe
	// (AccountSubscriberNamed: "Account/"+name).
	SubscriberNamed string
	// SourceState is what a resync returns: the key's version and state as
	// the source of truth has them (AccountSnapshot).
	SourceState string
	// Inspector is the dispatcher's method that returns its operator's view
	// for runtime/console (Inspector): a method, not a top-level name, like
	// Seal.
	Inspector string

	// The methods of the handler interfaces that are not one per event.
	//
	// Resync reads a key's current state from the source of truth
	// (ResyncAccount).
	Resync string
	// HandleBatch handles a batch of a key's events (HandleAccountBatch).
	HandleBatch string
	// HandleChanged handles the notification that a key changed
	// (HandleAccountChanged).
	HandleChanged string

	// Entity describes the entity to runtime/genimpl (accountEntity).
	Entity string
	// Core is the alias of the genimpl.Dispatcher that the dispatcher
	// embeds (accountDispatcher); ProducerCore and OutboxCore those of the
	// genimpl.Producer and genimpl.Outbox the producer and the outbox
	// embed (accountProducer, accountOutbox).
	Core, ProducerCore, OutboxCore string
	// Body holds the events that travel by value through the engines
	// (accountBody), declared only when the entity has such events.
	Body string
	// HandlerAdapter adapts a Handler to genimpl.Handler (accountHandler);
	// TxHandlerAdapter a TxHandler to genimpl.TxHandler (accountTxHandler).
	HandlerAdapter, TxHandlerAdapter string

	// Recorder is the test kit's recording handler (AccountRecorder).
	Recorder string
	// NewRecorder is its constructor (NewAccountRecorder).
	NewRecorder string
	// Harness is the test kit's delivery harness (AccountHarness).
	Harness string
	// NewHarness is its constructor (NewAccountHarness).
	NewHarness string
	// Delivery is the report of a delivery (AccountDelivery).
	Delivery string
	// ApplyInOrder applies events in order (ApplyAccountInOrder).
	ApplyInOrder string
	// Sequence numbers the versions of a stream (SequenceAccount).
	Sequence string
	// Snapshot tells the snapshot events (accountSnapshot).
	Snapshot string
}

// NamesOf returns the names generated for the entity named entity.
func NamesOf(entity string) Names {
	lc := lowerFirst(entity)
	return Names{
		Event:                  entity + "Event",
		Seal:                   "is" + entity + "Event",
		State:                  entity + "State",
		Handler:                entity + "Handler",
		UnimplementedHandler:   "Unimplemented" + entity + "Handler",
		TxHandler:              entity + "TxHandler",
		UnimplementedTxHandler: "Unimplemented" + entity + "TxHandler",
		Dispatcher:             entity + "Dispatcher",
		NewDispatcher:          "New" + entity + "Dispatcher",
		NewTxDispatcher:        "New" + entity + "TxDispatcher",
		Config:                 entity + "Config",
		Option:                 entity + "Option",
		Publisher:              entity + "Publisher",
		Producer:               entity + "Producer",
		NewProducer:            "New" + entity + "Producer",
		Codec:                  entity + "Codec",
		Outbox:                 entity + "Outbox",
		NewOutbox:              "New" + entity + "Outbox",
		SubscriberName:         entity + "SubscriberName",
		FirstSubscriber:        entity + "FirstSubscriber",
		SubscriberNamed:        entity + "SubscriberNamed",
		SourceState:            entity + "Snapshot",
		Inspector:              "Inspector",

		Resync:        "Resync" + entity,
		HandleBatch:   "Handle" + entity + "Batch",
		HandleChanged: "Handle" + entity + "Changed",

		Entity:           lc + "Entity",
		Core:             lc + "Dispatcher",
		ProducerCore:     lc + "Producer",
		OutboxCore:       lc + "Outbox",
		Body:             lc + "Body",
		HandlerAdapter:   lc + "Handler",
		TxHandlerAdapter: lc + "TxHandler",

		Recorder:     entity + "Recorder",
		NewRecorder:  "New" + entity + "Recorder",
		Harness:      entity + "Harness",
		NewHarness:   "New" + entity + "Harness",
		Delivery:     entity + "Delivery",
		ApplyInOrder: "Apply" + entity + "InOrder",
		Sequence:     "Sequence" + entity,
		Snapshot:     lc + "Snapshot",
	}
}

// StateConst is the constant of the entity's state s (AccountStateOpen).
func (n Names) StateConst(s string) string { return n.State + s }

// Scope is a package of generated code.
type Scope uint8

const (
	// Gen is the generated package.
	Gen Scope = 1 << iota
	// Kit is its test kit.
	Kit
)

// Decl is a name that generated code declares at the top level of a
// package: what validate reserves, so that two never clash.
type Decl struct {
	// Name is the identifier.
	Name string
	// What it is, for messages: "type", "function", "constant" or "name"
	// (an unexported helper).
	What string
	// In are the packages that declare it.
	In Scope
	// Role is the same for the names of every entity that play one part
	// (the Names field, "event" or "state constant"), so that a test can
	// check that each part is generated somewhere.
	Role string
}

// Decls returns the top-level names generated for the entity, its states'
// constants and its events' structs aside (see Entity.Decls).
func (n Names) Decls() []Decl {
	return []Decl{
		{n.Event, "type", Gen, "Event"},
		{n.State, "type", Gen, "State"},
		{n.Handler, "type", Gen, "Handler"},
		{n.UnimplementedHandler, "type", Gen, "UnimplementedHandler"},
		{n.TxHandler, "type", Gen, "TxHandler"},
		{n.UnimplementedTxHandler, "type", Gen, "UnimplementedTxHandler"},
		{n.Dispatcher, "type", Gen, "Dispatcher"},
		{n.NewDispatcher, "function", Gen, "NewDispatcher"},
		{n.NewTxDispatcher, "function", Gen, "NewTxDispatcher"},
		{n.Config, "type", Gen, "Config"},
		{n.Option, "type", Gen, "Option"},
		{n.Publisher, "type", Gen, "Publisher"},
		{n.Producer, "type", Gen, "Producer"},
		{n.NewProducer, "function", Gen, "NewProducer"},
		{n.Codec, "type", Gen, "Codec"},
		{n.Outbox, "type", Gen, "Outbox"},
		{n.NewOutbox, "function", Gen, "NewOutbox"},
		{n.SubscriberName, "type", Gen, "SubscriberName"},
		{n.FirstSubscriber, "constant", Gen, "FirstSubscriber"},
		{n.SubscriberNamed, "function", Gen, "SubscriberNamed"},
		{n.SourceState, "type", Gen, "SourceState"},
		{n.Entity, "name", Gen, "Entity"},
		{n.Core, "name", Gen, "Core"},
		{n.ProducerCore, "name", Gen, "ProducerCore"},
		{n.OutboxCore, "name", Gen, "OutboxCore"},
		{n.Body, "type", Gen, "Body"},
		{n.HandlerAdapter, "name", Gen, "HandlerAdapter"},
		{n.TxHandlerAdapter, "name", Gen, "TxHandlerAdapter"},
		{n.Recorder, "type", Kit, "Recorder"},
		{n.NewRecorder, "function", Kit, "NewRecorder"},
		{n.Harness, "type", Kit, "Harness"},
		{n.NewHarness, "function", Kit, "NewHarness"},
		{n.Delivery, "type", Kit, "Delivery"},
		{n.ApplyInOrder, "function", Kit, "ApplyInOrder"},
		{n.Sequence, "function", Kit, "Sequence"},
		{n.Snapshot, "name", Kit, "Snapshot"},
	}
}

// KitDecls are the names the test kit declares once, whatever the
// entities: its package-level aliases and constants.
func KitDecls() []Decl {
	var out []Decl
	for _, name := range []string{"Chaos", "Kind"} {
		out = append(out, Decl{name, "type", Kit, name})
	}
	for _, name := range []string{"First", "Duplicate", "Redelivery", "Lost"} {
		out = append(out, Decl{name, "constant", Kit, name})
	}
	return append(out, Decl{"ErrUnrepairable", "name", Kit, "ErrUnrepairable"}, Decl{"ErrSkippedInOrder", "name", Kit, "ErrSkippedInOrder"})
}

// The roles of the names made from a state or an event.
const (
	// RoleEvent is an event's struct.
	RoleEvent = "event"
	// RoleStateConst is a state's constant.
	RoleStateConst = "state constant"
)

// Decls returns every top-level name generated for e: Names.Decls, the
// constants of its states and the structs of its events. From says which
// state or event a name was made from ("" for the entity itself).
func (e *Entity) Decls() []EntityDecl {
	var out []EntityDecl
	for _, d := range e.Names.Decls() {
		out = append(out, EntityDecl{Decl: d})
	}
	for _, s := range e.StateNames() {
		out = append(out, EntityDecl{Decl{e.Names.StateConst(s), "constant", Gen, RoleStateConst}, s})
	}
	for _, ev := range e.Events {
		out = append(out, EntityDecl{Decl{ev.Name, "type", Gen, RoleEvent}, ev.Name})
	}
	return out
}

// EntityDecl is a Decl of an entity, with the state or event it was made
// from.
type EntityDecl struct {
	Decl
	// From is the state or event the name was made from, "" for the
	// entity's own names.
	From string
}

// lowerFirst returns s with its first letter in lower case.
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}
