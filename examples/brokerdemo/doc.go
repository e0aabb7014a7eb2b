// Package brokerdemo is for the broker examples (examples/kafka,
// examples/rabbitmq, runtime/pubsub/example and runtime/sqs/example): what
// their scenario shares, whatever the broker. Each example publishes a
// seeded stream of the reference schema's Account events ([Stream]) from
// several goroutines ([Publish]), runs two consumer processes that apply
// them to one [Book] (a shared database, in memory) through [Handler],
// kills one consumer mid-stream, and compares the book with in-order
// application ([Check]): nothing lost, nothing applied twice.
//
// It is example code, not a library: nothing outside the examples imports
// it, and it may change with them.
package brokerdemo
