// Package ir is the resolved model of a valid schema, the input of the
// emitter: every default applied, every type parsed and resolved, every
// name checked, everything in declaration order. A value of this package
// always describes code that compiles; package validate is the only
// producer.
//
// Names holds every identifier generated for an entity, made once by
// NamesOf; the emitters read them there and validate reserves them
// (Entity.Decls). Policy holds the delivery policy in the runtime's own
// types, and PolicyFields the runtime.Config fields it sets.
package ir
