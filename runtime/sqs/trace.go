package sqs

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/ordergen/ordergen/runtime/transport"
)

// A message's trace context travels in its message attributes
// (transport.Trace), two of the ten SQS allows: the producer writes the one
// its send's context carries, the consumer reads it for the tracers of its
// subscribers.

// addTrace adds t's attributes to attrs.
func addTrace(attrs map[string]types.MessageAttributeValue, t transport.Trace) {
	for _, h := range t.Headers() {
		attrs[h.Key] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(h.Value)}
	}
}

// traceOf returns the trace context of a message with attributes attrs.
func traceOf(attrs map[string]types.MessageAttributeValue) transport.Trace {
	return transport.TraceFrom(func(k string) string { return aws.ToString(attrs[k].StringValue) })
}
