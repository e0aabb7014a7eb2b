//go:build amd64 || arm64

package runtime

// prefetch asks the CPU to bring the cache line at addr closer, without
// waiting for it and without faulting on any address.
//
//go:noescape
func prefetch(addr uintptr)
