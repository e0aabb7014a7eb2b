package kafka

// A record carries one event: its key is the ordering key
// (transport.KeyText of the event's key), its value the codec's encoding,
// and its transport.HeaderType header the event's type name. A record that
// cannot be handled goes to the dead-letter topic with its key, value and
// headers, the transport's dead-letter headers (transport.HeaderReason,
// HeaderError) and these, which say where it came from.
const (
	// HeaderTopic is the topic a dead-lettered record came from.
	HeaderTopic = "ordergen-dlt-topic"
	// HeaderPartition is its partition, in decimal.
	HeaderPartition = "ordergen-dlt-partition"
	// HeaderOffset is its offset, in decimal.
	HeaderOffset = "ordergen-dlt-offset"
	// HeaderGroup is the consumer group that gave up on it.
	HeaderGroup = "ordergen-dlt-group"
)
