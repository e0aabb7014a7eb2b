package transporttest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transporttest/netfault"
)

// Disconnector is a Consumer that can lose its connections to the broker,
// as in a network fault, and make new ones by itself, going on as one
// process. Stress cuts them at random moments when
// StressOptions.Disconnect is set.
type Disconnector interface {
	Disconnect()
}

// StressOptions shape a Stress run.
type StressOptions struct {
	// Duration is how long faults are injected. Zero: 3s.
	Duration time.Duration
	// Seed seeds the random choices; zero picks one, which the run logs.
	Seed uint64
	// Members is the number of consumers alive at once. Zero: 3.
	Members int
	// Keys is the number of keys. Zero: 24.
	Keys int
	// Units is the stream's units of order. Zero: 3.
	Units int
	// Disconnect also cuts consumers' connections (their Consumer must be
	// a Disconnector). A consumer that lost its connection may still run
	// a handler when the broker gives its message to another, so two
	// handlers of a key may overlap (the version guard keeps that
	// harmless): overlaps are then counted, not failed.
	Disconnect bool
	// NetFaults puts each consumer behind a netfault.Net of its own
	// (ConsumerOptions.Net) and, at random moments, cuts or stalls one's
	// network, or resumes it; a consumer may be closed or killed while cut
	// off, and must stop all the same. Where the broker has leases whose
	// extensions the consumer sees confirmed (Limits without NoLeases and
	// UnconfirmedLeases), a handler must never begin while another of its
	// key runs with a live context; elsewhere a consumer cut off keeps
	// running its handlers until it learns that its messages went to
	// another, so overlaps are counted, not failed.
	NetFaults bool
}

// StressResult are the figures of a Stress run.
type StressResult struct {
	Seed                                      uint64
	Published, Applied, Duplicates            int
	Kills, Closes, Disconnects, Starts        int
	Breaks, Replays, Overlaps, HandlerRetries int
	// Cuts, Stalls and Resumes count the network faults (NetFaults);
	// Unfenced the overlaps with a handler whose context still lived.
	Cuts, Stalls, Resumes, Unfenced int
	// HeldAtKill is the number of events the killed consumers' engines
	// held when they were killed (their messages were delivered again).
	HeldAtKill int
}

// String formats the figures.
func (r StressResult) String() string {
	return fmt.Sprintf("seed %d: %d events published, %d applied, %d delivered again; %d kills (holding %d events), %d closes, %d disconnects, %d consumers started; %d networks cut, %d stalled, %d resumed; %d keys broken, %d replays; %d handler failures retried; %d overlaps (%d unfenced)",
		r.Seed, r.Published, r.Applied, r.Duplicates, r.Kills, r.HeldAtKill, r.Closes, r.Disconnects, r.Starts, r.Cuts, r.Stalls, r.Resumes, r.Breaks, r.Replays, r.HandlerRetries, r.Overlaps, r.Unfenced)
}

// Stress runs consumers of one stream while events are published, and at
// random moments kills a consumer, closes one, cuts one's connections
// (Disconnect), breaks a key (its handler fails for good, so it parks in
// memory wherever it runs) and heals one (Replay wherever it is parked),
// starting a consumer for each one killed or closed. Then it heals every
// key and checks that every event was applied, each key's in order, and
// (without Disconnect) that no two handlers of a key ever ran at once.
// It skips the test under go test -short, which leaves stress out.
func Stress(t *testing.T, h Harness, o StressOptions) StressResult {
	t.Helper()
	if testing.Short() {
		t.Skip("a stress test: seconds of faults at random (skipped under -short)")
	}
	s := newSuite(t, h)
	o = o.withDefaults()
	res := StressResult{Seed: o.Seed}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	t.Logf("stress seed %d (StressOptions.Seed replays it)", o.Seed)

	st := s.stream(t, o.Units)
	b := newBook()
	ks := keys("k", o.Keys)
	var broken sync.Map // key -> true: its handler fails for good
	var calm atomic.Bool
	var retries atomic.Int64
	var hmu sync.Mutex
	hrng := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
	handle := func(ctx context.Context, m *member, e Event) error {
		defer b.begin(ctx, e)()
		hmu.Lock()
		r := hrng.IntN(100)
		hmu.Unlock()
		switch {
		case r < 5:
			time.Sleep(time.Duration(r) * 100 * time.Microsecond)
		case r < 8 && !calm.Load():
			retries.Add(1)
			return errors.New("transient failure")
		}
		if _, bad := broken.Load(e.Key); bad {
			return runtime.Permanent(errors.New("broken key"))
		}
		if ctx.Err() != nil || m.dead.Load() {
			return errKilled
		}
		b.apply(m.name, e)
		return nil
	}
	n := 0
	spec := func() memberSpec {
		n++
		var net *netfault.Net
		if o.NetFaults {
			net = netfault.New() // closed when its member is replaced, or at the end
		}
		return memberSpec{
			net:         net,
			name:        fmt.Sprintf("m%d", n),
			quiet:       true, // thousands of them in a long run
			maxInFlight: 4 + rng.IntN(60),
			handle:      handle,
			engine: func(rc *runtime.Config[string, Event]) {
				rc.MaxActive = 8
				rc.Retry = runtime.Retry{Attempts: 3, Initial: time.Millisecond, Max: 2 * time.Millisecond}
				rc.Backlog = runtime.Backlog{PerKey: 20, Total: 100, WhenFull: runtime.Reject}
			},
		}
	}
	var members []*member
	for range o.Members {
		members = append(members, s.start(t, st, b, spec()))
		res.Starts++
	}

	// The publisher: each key's next event, keys at random, in batches.
	const window = 2000
	p := s.publisher(t, st)
	var published atomic.Int64
	stopPub := make(chan struct{})
	pubDone := make(chan struct{})
	seqs := map[string]int{}
	prng := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
	go func() {
		defer close(pubDone)
		for {
			select {
			case <-stopPub:
				return
			default:
			}
			// The consumers' pace: at most window events published and
			// not applied, so that healing at the end has a bounded
			// backlog to drain however long the run.
			if behind := int(published.Load()) - window; behind > 0 {
				select {
				case <-b.reached(behind):
				case <-stopPub:
					return
				}
			}
			batch := map[string][]Event{}
			var order []string
			for range 1 + prng.IntN(40) {
				k := ks[prng.IntN(len(ks))]
				seqs[k]++
				if len(batch[k]) == 0 {
					order = append(order, k)
				}
				batch[k] = append(batch[k], Event{k, seqs[k]})
			}
			if !p.try(t, order, func(k string) []Event { return batch[k] }) {
				return
			}
			for _, evs := range batch {
				published.Add(int64(len(evs)))
			}
			time.Sleep(time.Duration(prng.IntN(3)) * time.Millisecond)
		}
	}()

	// Faults at random moments.
	var replays sync.WaitGroup
	var replayed atomic.Int64
	heal := func(key string, ms []*member) {
		for _, m := range ms {
			replays.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
				defer cancel()
				if err := m.engine.Replay(ctx, key); err == nil {
					replayed.Add(1)
				}
			})
		}
	}
	// retire closes the network of a member that ended.
	retire := func(m *member) {
		if m.net != nil {
			_ = m.net.Close()
		}
	}
	defer func() {
		for _, m := range members {
			retire(m)
		}
	}()
	deadline := time.Now().Add(o.Duration)
	for time.Now().Before(deadline) {
		time.Sleep(time.Duration(2+rng.IntN(30)) * time.Millisecond)
		i := rng.IntN(len(members))
		switch r := rng.IntN(100); {
		case r < 25:
			held, _, _, _ := members[i].target.counts()
			res.HeldAtKill += held
			members[i].kill(t, s.timeout)
			retire(members[i])
			members[i] = s.start(t, st, b, spec())
			res.Kills++
			res.Starts++
		case r < 40:
			members[i].close(t, s.timeout)
			retire(members[i])
			members[i] = s.start(t, st, b, spec())
			res.Closes++
			res.Starts++
		case r < 45 && o.NetFaults:
			switch net := members[i].net; {
			case net.Stats().State != netfault.Up:
				net.Resume()
				res.Resumes++
			case rng.IntN(2) == 0:
				net.Cut()
				res.Cuts++
			default:
				net.Stall()
				res.Stalls++
			}
		case r < 50 && o.Disconnect:
			d, ok := members[i].c.(Disconnector)
			if !ok {
				t.Fatal("StressOptions.Disconnect: the consumer is not a Disconnector")
			}
			d.Disconnect()
			res.Disconnects++
		case r < 70:
			if _, loaded := broken.LoadOrStore(ks[rng.IntN(len(ks))], true); !loaded {
				res.Breaks++
			}
		case r < 90:
			k := ks[rng.IntN(len(ks))]
			if _, was := broken.LoadAndDelete(k); was {
				heal(k, append([]*member(nil), members...))
			}
		}
		if ok, err := members[i].exited(); ok {
			t.Fatalf("%s: Run returned %v while it should run", members[i].name, err)
		}
	}
	close(stopPub)
	<-pubDone

	// Heal everything, and replay what is parked until every event is in.
	calm.Store(true)
	broken.Clear()
	for _, m := range members {
		if m.net != nil {
			m.net.Resume()
		}
	}
	total := int(published.Load())
	reached := b.reached(total)
	timeout := time.After(s.timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case <-reached:
			break wait
		case <-timeout:
			st := b.state()
			// The consumers alive are the ones to look at.
			for _, m := range members {
				held, _, refused, _ := m.target.counts()
				t.Logf("%s: the engine holds %d events (%d refused so far); its network: %+v", m.name, held, refused, netStats(m.net))
				m.logs.dump(t, m.name+"'s consumer")
			}
			t.Fatalf("after healing: %d of %d events applied (skips %v, overlaps %d)", st.applied, total, first(st.skips), len(st.overlaps))
		case <-tick.C:
			for _, m := range members {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				pk, err := m.engine.ParkedKeys(ctx)
				cancel()
				if err != nil {
					continue
				}
				for _, k := range pk {
					heal(k.Key, []*member{m})
				}
			}
		}
	}
	replays.Wait()
	for _, m := range members {
		m.close(t, s.timeout)
	}
	end := b.state()
	res.Published, res.Applied, res.Duplicates = total, end.applied, end.dups
	res.Replays = int(replayed.Load())
	res.Overlaps = len(end.overlaps)
	res.Unfenced = len(end.unfenced)
	res.HandlerRetries = int(retries.Load())
	if len(end.skips) > 0 {
		t.Errorf("%d events applied before their predecessor (lost or reordered): %v", len(end.skips), first(end.skips))
	}
	if end.applied != total {
		t.Errorf("applied %d events, want %d", end.applied, total)
	}
	switch leases := !h.Limits.NoLeases && !h.Limits.UnconfirmedLeases; {
	case !o.Disconnect && !o.NetFaults && len(end.overlaps) > 0:
		t.Errorf("%d times two handlers of one key ran at once: %v", len(end.overlaps), first(end.overlaps))
	case o.NetFaults && leases && len(end.unfenced) > 0:
		t.Errorf("%d times a handler began while another of its key ran with a live context (a lease lost unseen): %v", len(end.unfenced), first(end.unfenced))
	}
	t.Log(res)
	return res
}

func (o StressOptions) withDefaults() StressOptions {
	if o.Duration == 0 {
		o.Duration = 3 * time.Second
	}
	if o.Seed == 0 {
		o.Seed = rand.Uint64()
	}
	if o.Members == 0 {
		o.Members = 3
	}
	if o.Keys == 0 {
		o.Keys = 24
	}
	if o.Units == 0 {
		o.Units = 3
	}
	return o
}

// netStats returns n's figures, or none without a Net.
func netStats(n *netfault.Net) any {
	if n == nil {
		return "none"
	}
	return n.Stats()
}
