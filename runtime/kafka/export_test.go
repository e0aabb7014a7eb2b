package kafka

// Exported for the tests of package kafka_test.

var Murmur2 = murmur2
