//go:build unix

package main

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on the file at path, created if need be,
// without waiting. ok is false when another process holds it; release
// gives it back and removes the file, so that no run leaves it in the
// temporary directory. The system gives back the lock of a process that
// ends, however it ends (its file then stays, for the next run to take).
//
// A lock is the path's only if the file it locked is still at the path:
// a holder removes the file before it lets go, so a file opened just
// before that removal, and locked just after, is one nobody else will
// find; lockFile then gives up, as if the lock were held.
func lockFile(path string) (release func(), ok bool) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	locked, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, false
	}
	if at, err := os.Stat(path); err != nil || !os.SameFile(locked, at) {
		f.Close()
		return nil, false
	}
	return func() {
		os.Remove(path)
		f.Close()
	}, true
}
