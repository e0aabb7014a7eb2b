// Package versions is for the runtime's own packages: the in-memory table
// of each key's last applied version that runtime.MemoryVersionStore and
// the guards of generated code (runtime/genimpl) keep. A guard reads a
// key's version before every event and sets it after; this table makes
// the read take no lock and the set take none for a key it holds, and lets
// a guard that read an entry set it without finding the key again (one
// hash of the key per event).
package versions
