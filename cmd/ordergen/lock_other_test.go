//go:build !unix

package main

// lockFile takes no lock where the system offers no flock: the caller
// falls back to what needs none.
func lockFile(string) (release func(), ok bool) { return nil, false }
