package oteltrace_test

import (
	"context"
	"errors"
	"flag"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/oteltrace"
	"github.com/ordergen/ordergen/runtime/transport"
)

var (
	stressFor  = flag.Duration("oteltrace.stress", 2*time.Second, "how long TestTracerStress attacks a Tracer (run long with e.g. -oteltrace.stress=5m)")
	stressSeed = flag.Uint64("oteltrace.seed", 0, "run TestTracerStress's round of this seed only")
)

// TestTracerStress attacks a Tracer with random schedules: many keys,
// handlers that fail, panic or run slowly at random, retries, parks and
// replays, messages linked and unlinked by tag while their attempts run,
// and an engine closed either cleanly or at once at a random moment. After
// a clean close every span that started has ended, each with an outcome,
// and the handled spans are the handled events; after an abrupt one, no
// span ends twice and the ended ones have outcomes (under -race: no data
// race in the tracer's books).
func TestTracerStress(t *testing.T) {
	if *stressSeed != 0 {
		stressRound(t, *stressSeed)
		return
	}
	end := time.Now().Add(*stressFor)
	rounds := 0
	for time.Now().Before(end) || rounds == 0 {
		seed := rand.Uint64()
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) { stressRound(t, seed) })
		if t.Failed() {
			return
		}
		rounds++
	}
	t.Logf("%d rounds", rounds)
}

func stressRound(t *testing.T, seed uint64) {
	rnd := rand.New(rand.NewPCG(seed, 1))
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	tr := oteltrace.New(tp)
	sender, span := tp.Tracer("t").Start(context.Background(), "send")
	span.End()
	parent := tr.Inject(sender)

	keys := 1 + rnd.IntN(40)
	events := 1 + rnd.IntN(400)
	failP, panicP := rnd.Float64()*0.4, rnd.Float64()*0.05
	abrupt := rnd.IntN(3) == 0
	var handled atomic.Int64
	var mu sync.Mutex // guards hr, the handlers' random source
	hr := rand.New(rand.NewPCG(seed, 2))
	e, err := runtime.New(func(ctx context.Context, _ string, _ event) error {
		mu.Lock()
		r := hr.Float64()
		mu.Unlock()
		switch {
		case r < panicP:
			panic("stress")
		case r < panicP+failP:
			return errors.New("stress")
		case r > 0.98:
			time.Sleep(time.Duration(r*100) * time.Microsecond)
		}
		return nil
	}, runtime.Config[string, event]{
		Name: "Stress", Tracer: tr, MaxActive: 1 + rnd.IntN(8),
		Retry: runtime.Retry{Attempts: 1 + rnd.IntN(3), Initial: time.Microsecond, Max: 50 * time.Microsecond},
		OnOutcome: func(_ string, tag uint64, o runtime.Outcome) {
			if o == runtime.Handled {
				handled.Add(1)
			}
			if tag%2 == 0 {
				tr.Unlink(tag) // as a Source does once the message settles (concurrently with its attempts here)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	te := runtime.EngineForTransport(e)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // an operator replaying parked keys
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			ks, _ := e.ParkedKeys(context.Background())
			for _, k := range ks {
				_ = e.Replay(context.Background(), k.Key)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	closed := make(chan struct{})
	if abrupt {
		wg.Add(1)
		after := time.Duration(rnd.IntN(3000)) * time.Microsecond
		go func() {
			defer wg.Done()
			time.Sleep(after)
			_ = e.Close(transport.DoneContext())
			close(closed)
		}()
	}
	for i := range events {
		k := "k" + strconv.Itoa(i%keys)
		tag := uint64(i + 1)
		tr.Link(tag, parent)
		if err := te.SubmitTagged(context.Background(), k, event{k, uint64(i/keys + 1)}, tag); err != nil {
			if abrupt {
				break // closed under the submitter
			}
			t.Fatalf("submit: %v", err)
		}
	}
	if !abrupt {
		// Replay until every event reached an outcome but a park, then
		// the rest parks for good when the operator stops.
		for deadline := time.Now().Add(30 * time.Second); ; {
			st := e.Stats()
			if st.Pending == 0 && st.Parked == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("events still pending after 30s: %+v", st)
			}
			time.Sleep(time.Millisecond)
		}
		if err := e.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	} else {
		<-closed
	}
	close(stop)
	wg.Wait()

	ended := rec.Ended()
	seen := map[[8]byte]bool{}
	var handledSpans int64
	for _, sp := range ended {
		if sp.Name() != "process Stress" {
			continue
		}
		id := sp.SpanContext().SpanID()
		if seen[id] {
			t.Fatalf("span %s ended twice", id)
		}
		seen[id] = true
		o, ok := attr(sp, "ordergen.outcome")
		if !ok {
			t.Fatalf("span %s ended without an outcome (events %v)", id, eventNames(sp))
		}
		if o == runtime.Handled.String() {
			handledSpans++
		}
	}
	if abrupt {
		return
	}
	if started := len(rec.Started()) - 1; started != len(seen) {
		t.Errorf("%d attempt spans started, %d ended", started, len(seen))
	}
	if handledSpans != handled.Load() {
		t.Errorf("%d spans handled, %d events handled", handledSpans, handled.Load())
	}
}
