package groupcommit

// OnQueued makes c call f, with its lock held, each time a key is queued:
// tests wait for it to know the order of a group.
func OnQueued[T any](c *Committer[T], f func(key string)) { c.onQueued = f }
