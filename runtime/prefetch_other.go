//go:build !amd64 && !arm64

package runtime

// prefetch does nothing on this architecture.
func prefetch(uintptr) {}
