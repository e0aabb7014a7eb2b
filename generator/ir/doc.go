// Package ir is the resolved model of a valid schema, the input of the
// emitter: every default applied, every type parsed and resolved, every
// name checked, everything in declaration order. A value of this package
// always describes code that compiles; package validate is the only
// producer.
package ir
