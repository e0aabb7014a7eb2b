// Package asyncapi writes the AsyncAPI 3.0.0 document of a schema
// (ordergen asyncapi): the machine-readable description of its events that
// catalogues, documentation portals and other languages' code generators
// read. It is for the ordergen command and tools built like it.
//
// The document, in YAML, holds:
//
//   - info: the package's name and doc:. AsyncAPI requires an API version,
//     which a schema does not have (its version: is the format's): it says
//     "unversioned".
//   - servers: one per broker an entity's brokers: names (kafka, rabbitmq,
//     pubsub, sqs, with the protocols kafka, amqp, googlepubsub and sqs);
//     a host the service configures is a server variable.
//   - channels: one per entity and broker, named Entity.broker, whose
//     address is the schema's topic (Kafka, Pub/Sub) or queue (SQS); on
//     RabbitMQ the address is the routing key, the event's key (a channel
//     parameter located in the payload), on the topology's consistent-hash
//     exchange (the channel's amqp binding). An entity without brokers:
//     has one channel, named after it, whose address is null (unknown).
//   - operations: a send and a receive per channel, since the generated
//     code does both (the producer or outbox; the consumer feeding the
//     dispatcher), each naming the generated types that do it.
//   - components: a message per event (its summary from what it does to
//     its entity, its description from doc:, the headers its brokers add,
//     its bindings) and a schema per event payload.
//
// The payload schema is the JSON Schema of what the generated codec writes
// (encoding/json of the event's struct): the key, the version and the
// fields, under their wire names, all required, since no field is
// omitempty; each Go type as encoding/json writes it (time.Time as a
// date-time string, []byte as base64 or null, time.Duration as integer
// nanoseconds, integer map keys in decimal, pointers, slices and maps
// nullable). A qualified type of another package writes itself, so its
// schema only describes it; a complex number does not encode at all, so
// its schema passes nothing. The generator emits no other JSON Schema of
// payloads (package jsonschema's is the schema files'), so this is the one.
//
// Where the key travels is said with the bindings that have a place for
// it: Kafka's message binding key (the key's text, durable.EncodeKey's),
// Pub/Sub's orderingKey (a runtime expression pointing into the payload,
// $message.payload#/AccountID), RabbitMQ's routing key as the channel's
// address parameter; SQS's binding has no message group, so the SQS
// channel binding carries it as the extension x-ordergen-message-group-id.
// The headers ordergen's transports add (ordergen-type, and ordergen-key on
// RabbitMQ) are the message's headers schema.
//
// The document depends on the schema alone, in its order: the same schema
// gives the same bytes. Its tests compare golden documents (testdata,
// rewritten with -update), check every field schema against encoding/json's
// encodings and the example's payloads against its generated codecs, and,
// with ORDERGEN_TEST_ASYNCAPI set (as .ci/run sets it), validate every
// document with the official parser, @asyncapi/parser, and check that it
// refuses broken ones.
package asyncapi
