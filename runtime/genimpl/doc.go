// Package genimpl is for the code that ordergen generates, and only for it:
// the wiring that is the same for every entity (a dispatcher's subscribers,
// its guards in memory, in a store's transactions and in group commits, its
// publishing, producer, outbox, codec and operator's view), written once as
// generic code over an entity's description (Entity), which the generated
// files fill in from the schema: its names, its states, its events' rules,
// its policies. The generated files keep what is specific to the schema:
// the types, the typed methods, and the tables that describe them.
//
// Inside a dispatcher an event travels as the entity's generated body B,
// not as the entity's event interface: the body holds small events by
// value, so that publishing one allocates nothing, and the guards read its
// kind and version through the generated Entity.Kind and
// Entity.BodyVersion, without reflection or an interface call (see
// env.go). The edges
// that hand events to people (OnSkip, ParkedEvents, park stores, dead
// letters, the inspector, batch handlers) get them as the interface.
//
// Like protobuf-go's runtime/protoimpl, it changes with the generator: its
// API is what generated code calls, not a stable API for people, and a
// handler author needs nothing from it (the handler's door is package
// runtime). The generated code and this package agree on a version range
// at compile time (MinVersion, MaxVersion): see version.go for what a
// build error there means and what to run.
//
// A few of its types reach a generated package's users by alias: a
// generated AccountConfig is a Config, AccountOption an Option, and a
// generated AccountDispatcher embeds a Dispatcher, whose methods (Flush,
// Close, Replay, Discard, ParkedKeys, ParkedEvents, Health, TopBacklog,
// Stuck, Stats, Publish, Inspector, and the transports' SubmitTagged,
// Withdraw and Subscriptions) are the dispatcher's. They are documented
// here for those readers.
package genimpl
