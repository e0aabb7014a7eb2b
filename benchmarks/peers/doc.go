// Package peers holds the dispatchers that the benchmark suite compares
// side by side: the ordergen runtime and the designs it is measured
// against.
//
// Every peer implements Peer and is built by a Spec's New from a Handler
// and a worker count, so the suite drives them all the same way: one
// goroutine, or several (each with keys of its own), calls Submit for each
// event, then Drain waits until every event is handled, then Close releases
// the peer.
//
// The peers are:
//
//   - ordergen: the ordergen runtime's per-key lane engine (runtime.New).
//   - generated: what users run: the dispatcher ordergen generates from the
//     benchmarks' schema (package benchevents), with its version guard on
//     the in-memory store and the schema's policies, a 5s timeout per
//     attempt included.
//   - policies: the ordergen engine with, written by hand, what generated
//     adds to it: the schema's policies (the 5s timeout, retries, park) and
//     a version guard on the runtime's in-memory version store. Against
//     generated it shows the generated code's own cost; against ordergen,
//     what the policies and the guard cost.
//   - pool: an unordered worker pool over one buffered channel. It does
//     not keep per-key order; it is the ceiling the others are held to.
//   - striped: hash striping, crc32(key) % N channels with one goroutine
//     each. Ordered, but keys that share a stripe wait for each other.
//   - chained: a per-key chain, a map from key to a queue drained by a
//     goroutine started when the key's chain was empty and removed when it
//     drains, with at most N chains running at once.
//   - watermill: Watermill's GoChannel and Router set up to keep per-key
//     order: BlockPublishUntilSubscriberAck and N shard topics with one
//     handler each.
package peers
