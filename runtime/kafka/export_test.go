package kafka

// Exported for the tests of package kafka_test.

var Murmur2 = murmur2

// The tests' event and codec (decode_internal_test.go).
type (
	TestEv    = testEv
	TestCodec = testCodec
)
