package runtime

// SupportPackageIsVersion2 is referenced by code that ordergen generates, so
// that generated code and runtime that do not match fail to compile. When
// the compiler reports it undefined, regenerate with the ordergen version
// that matches this module (go generate ./...), or upgrade the module
// (go get github.com/ordergen/ordergen@latest).
//
// Version 2: events travel as the entity's interface, metrics go through
// MeterProvider, and dispatchers are transport Targets (Withdraw,
// Subscriptions). Code generated for version 1 does not compile against
// this runtime; regenerate it.
const SupportPackageIsVersion2 = true
