// Package emit turns the resolved model of a schema (package ir) into Go
// source files with github.com/dave/jennifer, one file per concern:
//
//	events.go       the event structs and each entity's sealed event interface
//	handlers.go     each entity's handler interface, one typed method per event
//	dispatchers.go  each entity's dispatcher, configuration and options, the
//	                internal envelope that carries events through the runtime,
//	                and the compile-time handshake with the runtime
//	guards.go       the engine handler of each subscriber: the version guard
//	                and the forward-only state guard
//	publishers.go   each entity's publisher interface and the dispatcher's
//	                typed Publish methods
//
// The output is gofmt-formatted with imports grouped as goimports groups them
// (standard library first), doc comments are wrapped into paragraphs, and it
// starts with the "Code generated ... DO NOT
// EDIT." header, and depends only on its input: the same model gives the
// same bytes.
package emit
