// Package testkit emits the test kit of a schema: a package named after
// the generated one with "test" appended (ledgertest beside ledger, as
// net/http/httptest is beside net/http), written into a sub-directory of
// the output directory. It holds, for each entity (Account below):
//
//	recorders.go  AccountRecorder, an AccountHandler that records every
//	              event it handled, in order, after passing it to an
//	              optional next handler
//	harnesses.go  AccountHarness, which delivers events through a real
//	              AccountDispatcher (lanes, guards, resequencer) in the
//	              order a seeded Chaos plan gives (runtime/delivery), and
//	              reports what its guards skipped; ApplyAccountInOrder (and
//	              the harness's ApplyInOrder), the in-order application to
//	              compare with, which fails with ErrSkippedInOrder when the
//	              guards skip an event in publication order (almost always
//	              a schema mistake that a chaotic delivery through the same
//	              guards repeats), but for the reasons a test allows;
//	              SequenceAccount, which numbers the versions of a stream
//	              as its single writer would
//	kit.go        the package documentation, the Chaos and Kind names and
//	              the errors
//
// The kit imports the generated package by its import path, which the
// caller supplies.
package testkit
