package transporttest

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/ordergen/ordergen/runtime"
)

// Crowd is the consumers that a transport's chaos test keeps running, by
// name: members join under new names and leave at random, as the
// processes of a deployment do. It is safe for concurrent use.
type Crowd[M any] struct {
	mu      sync.Mutex
	members map[string]M
	born    int
}

// NewCrowd returns an empty crowd.
func NewCrowd[M any]() *Crowd[M] {
	return &Crowd[M]{members: map[string]M{}}
}

// Join starts a member with start, under a name no member had before (m1,
// m2, ...), and adds it. start runs without the crowd's lock: it may take
// time.
func (c *Crowd[M]) Join(start func(name string) M) {
	c.mu.Lock()
	c.born++
	name := fmt.Sprint("m", c.born)
	c.mu.Unlock()
	m := start(name)
	c.mu.Lock()
	c.members[name] = m
	c.mu.Unlock()
}

// Leave removes the member that rng picks and returns it, for the test to
// stop or kill; while fewer than two run, none leaves (the last one keeps
// the events flowing) and ok is false. The pick depends on rng alone, so
// that a seed replays the same choices.
func (c *Crowd[M]) Leave(rng *rand.Rand) (name string, m M, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.members) < 2 {
		return "", m, false
	}
	names := c.names()
	name = names[rng.IntN(len(names))]
	m = c.members[name]
	delete(c.members, name)
	return name, m, true
}

// Len returns how many members run.
func (c *Crowd[M]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.members)
}

// Each calls fn with each member, in the order of their names, outside the
// crowd's lock: fn may take time, and members may join or leave meanwhile.
func (c *Crowd[M]) Each(fn func(name string, m M)) {
	c.mu.Lock()
	names := c.names()
	ms := make([]M, len(names))
	for i, n := range names {
		ms[i] = c.members[n]
	}
	c.mu.Unlock()
	for i, n := range names {
		fn(n, ms[i])
	}
}

// names returns the members' names, sorted; c.mu is held.
func (c *Crowd[M]) names() []string {
	names := slices.Collect(maps.Keys(c.members))
	slices.Sort(names)
	return names
}

// ReplayParked is a chaos test's operator at work on one engine: it replays
// every key that e parked, after fixing, when fix is set, the key's poison
// events published so far (produced holds each key's last published Seq;
// see Guarded.Fix). A replay may park the key again, or find it gone to
// another consumer: both are part of the storm, so errors are ignored.
func ReplayParked[E any](ctx context.Context, e *runtime.Engine[string, E], g *Guarded, produced map[string]int, fix bool) {
	parked, err := e.ParkedKeys(ctx)
	if err != nil {
		return
	}
	for _, pk := range parked {
		if fix {
			g.Fix(pk.Key, produced[pk.Key])
		}
		_ = e.Replay(ctx, pk.Key)
	}
}
