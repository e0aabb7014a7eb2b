// Package durable is for authors of durable stores, and of transports that
// carry events as bytes: the plumbing between an engine's typed keys and
// events and a store that keeps text keys and raw events outside the
// process.
//
// A [Store] keeps guard versions, states and parked events in namespaces
// (one per subscriber of an entity), with keys as text ([EncodeKey],
// [DecodeKey]) and events as [RawEvent]s of a [Codec] (ordergen generates
// one per entity). [EncodedParks], [EncodedVersions] and [EncodedStates]
// give a store's text-keyed stores the types of an engine. A [TxStore] also
// begins transactions ([KeyTx]) that a handler writes in, so that its writes
// and the advance of the key's version commit together: effectively once.
//
// runtime/sqlstore implements Store and TxStore on SQLite and PostgreSQL;
// runtime/storetest is the suite every store passes.
package durable
