package console_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/console"
	"github.com/ordergen/ordergen/runtime/inspect"
)

var stressFor = flag.Duration("console.stress.for", 2*time.Second, "how long TestStressOperatorsWhileEventsFlow runs")

// Operators replay, discard and read at random moments while events flow
// and keys fail and park at random: every accepted event reaches one
// outcome (the engine's accounting holds), what the API says it discarded
// is what the engine counted (the operators discard only through it), and
// each key's handled events stay in order.
func TestStressOperatorsWhileEventsFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("a stress test: seconds of operators' actions at random (skipped under -short)")
	}
	s := newService(t, runtime.Config[string, deposit]{Backlog: runtime.Backlog{PerKey: 100000, Total: 1000000}})
	// Every action waits for its end (a discard answered 202, still
	// running, would not say how many events it dropped).
	site := newSite(t, console.Config{Inspectors: []inspect.Inspector{s.inspector()}, Authorize: allowAll, ActionTimeout: time.Minute})
	keys := make([]string, 12)
	for i := range keys {
		keys[i] = fmt.Sprintf("acct-%d", i)
	}
	deadline := time.Now().Add(*stressFor)
	var wg sync.WaitGroup
	var discarded atomic.Int64 // what the API said it discarded
	// Publishers: each key's events carry increasing numbers, up to
	// perKey of them, so that a park never fills its key's limit (a submit
	// would then be refused, by design) however fast publishers outrun the
	// handlers on a loaded machine.
	const perKey = 2000
	var pubMu sync.Mutex
	next := map[string]int{}
	for p := range 3 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(p), 1))
			for time.Now().Before(deadline) {
				key := keys[r.IntN(len(keys))]
				pubMu.Lock()
				if next[key] >= perKey {
					full := true
					for _, k := range keys {
						full = full && next[k] >= perKey
					}
					pubMu.Unlock()
					if full {
						return
					}
					continue
				}
				next[key]++
				n := next[key]
				err := s.engine.Submit(context.Background(), key, deposit{Seq: n})
				pubMu.Unlock()
				if err != nil {
					t.Errorf("submit: %v", err)
					return
				}
			}
		})
	}
	// Faults come and go.
	wg.Go(func() {
		r := rand.New(rand.NewPCG(7, 7))
		for time.Now().Before(deadline) {
			s.setBroken(keys[r.IntN(len(keys))], r.IntN(2) == 0)
			time.Sleep(time.Millisecond)
		}
	})
	// Operators.
	for o := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(o), 99))
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			for time.Now().Before(deadline) {
				key := keys[r.IntN(len(keys))]
				var path string
				switch r.IntN(5) {
				case 0:
					path = "api/replay"
				case 1:
					path = "api/discard"
				case 2:
					path = "replay"
				default:
					for _, read := range []string{"api/overview", "", "api/events?" + keyForm(key).Encode() + "&limit=3", "key?" + keyForm(key).Encode()} {
						res, err := client.Get(site.srv.URL + "/ops/" + read)
						if err != nil {
							t.Errorf("GET %s: %v", read, err)
							return
						}
						res.Body.Close()
						if res.StatusCode != http.StatusOK {
							t.Errorf("GET %s: %d", read, res.StatusCode)
						}
					}
					continue
				}
				res, err := client.PostForm(site.srv.URL+"/ops/"+path, keyForm(key))
				if err != nil {
					t.Errorf("POST %s: %v", path, err)
					return
				}
				var a struct {
					Status string
					Events int
				}
				if path == "api/discard" {
					json.NewDecoder(res.Body).Decode(&a)
					if a.Status == "done" {
						discarded.Add(int64(a.Events))
					}
				}
				res.Body.Close()
				switch res.StatusCode {
				case http.StatusOK, http.StatusConflict, http.StatusSeeOther, http.StatusAccepted:
				default:
					t.Errorf("POST %s %s: %d", path, key, res.StatusCode)
				}
			}
		})
	}
	wg.Wait()
	// Everything fixed: the parks drain by replay; then the engine rests.
	for _, k := range keys {
		s.setBroken(k, false)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		if err := s.engine.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		parked, err := s.engine.ParkedKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(parked) == 0 {
			break
		}
		for _, pk := range parked {
			site.post(t, "api/replay", keyForm(pk.Key), nil)
		}
	}
	st := s.engine.Stats()
	if st.Accepted+st.Restored != st.Handled+st.Skipped+uint64(st.Parked)+st.DeadLettered+st.Dropped+st.Discarded+st.Conflated+st.Withdrawn+uint64(st.Pending) {
		t.Fatalf("accounting broken: %+v", st)
	}
	if uint64(discarded.Load()) != st.Discarded {
		t.Fatalf("the API discarded %d events, the engine counted %d", discarded.Load(), st.Discarded)
	}
	// Each key's handled events are in order; discarded ones are missing.
	for _, k := range keys {
		seen := s.handled(k)
		for i := 1; i < len(seen); i++ {
			if seen[i] <= seen[i-1] {
				t.Fatalf("%s handled out of order: %v", k, seen)
			}
		}
	}
	t.Logf("%d discarded through the API; stats %+v", discarded.Load(), st)
}
