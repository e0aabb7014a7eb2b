package runtime

// SupportPackageIsVersion3 is referenced by code that ordergen generates, so
// that generated code and runtime that do not match fail to compile. When
// the compiler reports it undefined, regenerate with the ordergen version
// that matches this module (go generate ./...), or upgrade the module
// (go get github.com/ordergen/ordergen@latest).
//
// Version 3: the runtime is split by audience. The transport contract
// (sinks, targets, subscriptions) is in runtime/transport, the metrics
// interface in runtime/meter, and the durable-store plumbing (codecs,
// durable stores, encoded adapters) in runtime/durable. Code generated for
// version 2 or earlier does not compile against this runtime; regenerate it.
const SupportPackageIsVersion3 = true
