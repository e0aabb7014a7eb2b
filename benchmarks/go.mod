module github.com/ordergen/ordergen/benchmarks

go 1.26.0

replace github.com/ordergen/ordergen => ../

require (
	github.com/ThreeDotsLabs/watermill v1.5.1
	github.com/ordergen/ordergen v0.0.0-00010101000000-000000000000
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/lithammer/shortuuid/v3 v3.0.7 // indirect
	github.com/oklog/ulid v1.3.1 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
)
