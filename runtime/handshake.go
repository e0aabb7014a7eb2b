package runtime

// SupportPackageIsVersion1 is referenced by code that ordergen generates, so
// that generated code and runtime that do not match fail to compile. When
// the compiler reports it undefined, regenerate with the ordergen version
// that matches this module (go generate ./...), or upgrade the module
// (go get github.com/ordergen/ordergen@latest).
const SupportPackageIsVersion1 = true
