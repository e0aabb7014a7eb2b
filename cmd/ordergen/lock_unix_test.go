//go:build unix

package main

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on the file at path, created if need be,
// without waiting. ok is false when another process holds it; release
// gives it back. The system gives back the lock of a process that ends,
// however it ends.
func lockFile(path string) (release func(), ok bool) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}
