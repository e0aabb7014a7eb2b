package runtime

import (
	"sync"
	"testing"
)

// newTestQueue returns a run queue that starts no worker goroutine: start
// only counts.
func newTestQueue(max int) (*runQueue[string, int], *int) {
	started := new(int)
	rq := &runQueue[string, int]{}
	rq.init(max, func() { *started++ }, &clock{manual: &manualClock{}}, false)
	return rq, started
}

func laneTask(name string) task[string, int] {
	return task[string, int]{l: &lane[string, int]{key: name}}
}

func popNames(t *testing.T, rq *runQueue[string, int], n int) []string {
	t.Helper()
	var got []string
	for i := 0; i < n; i++ {
		rq.mu.Lock()
		tk, ok := rq.pick()
		rq.mu.Unlock()
		if !ok {
			t.Fatalf("pop %d: queue empty", i)
		}
		got = append(got, tk.l.key)
	}
	return got
}

func TestRunQueueReadyGoesFirstButYieldedIsServed(t *testing.T) {
	rq, _ := newTestQueue(8)
	for _, n := range []string{"y1", "y2"} {
		rq.pushYielded(laneTask(n))
	}
	for i := 0; i < 6; i++ {
		rq.push(laneTask("r" + itoa(i)))
	}
	// readyFirst ready tasks, then a yielded one, and again.
	want := []string{"r0", "r1", "r2", "r3", "y1", "r4", "r5", "y2"}
	if got := popNames(t, rq, len(want)); !equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if rq.queued.Load() != 0 {
		t.Fatalf("queued mirror %d after emptying", rq.queued.Load())
	}
}

// A task that becomes ready while none waits ahead of it is taken at the
// first pick, or at the second when readyFirst ready tasks went just before
// while a yielded one waited: the one yielded turn more that the liveness
// bound of the package documentation allows for.
func TestRunQueueNewTaskWaitsForOneYieldedTurnAtMost(t *testing.T) {
	rq, _ := newTestQueue(8)
	rq.pushYielded(laneTask("y1"))
	rq.pushYielded(laneTask("y2"))
	for i := 0; i < readyFirst; i++ {
		rq.push(laneTask("r" + itoa(i)))
	}
	popNames(t, rq, readyFirst)
	rq.push(laneTask("new"))
	if got := popNames(t, rq, 2); !equal(got, []string{"y1", "new"}) {
		t.Fatalf("order %v, want one yielded turn, then the new task", got)
	}
	rq.push(laneTask("newer")) // a yielded one just went: the new one is next
	if got := popNames(t, rq, 1); !equal(got, []string{"newer"}) {
		t.Fatalf("order %v, want the new task first", got)
	}
}

func TestRunQueueYieldedGoesBehindEveryWaitingTask(t *testing.T) {
	rq, _ := newTestQueue(8)
	rq.pushYielded(laneTask("a"))
	rq.pushYielded(laneTask("b"))
	rq.pushYielded(laneTask("a-again")) // a yields after its turn: behind b
	if got := popNames(t, rq, 3); !equal(got, []string{"a", "b", "a-again"}) {
		t.Fatalf("order %v", got)
	}
}

func TestRunQueueStartsWorkersUpToMax(t *testing.T) {
	rq, started := newTestQueue(2)
	for i := 0; i < 5; i++ {
		rq.push(laneTask("t"))
	}
	if *started != 2 || rq.started() != 2 {
		t.Fatalf("started %d workers for 5 tasks with max 2", *started)
	}
	if !rq.crowded() {
		t.Fatal("tasks wait and no worker sleeps: crowded")
	}
	rq.mu.Lock()
	rq.sleepy = 1 // a worker went to sleep
	rq.asleep.Store(1)
	rq.mu.Unlock()
	if rq.crowded() {
		t.Fatal("a worker sleeps: not crowded")
	}
	rq.push(laneTask("u")) // wakes the sleeper, starts nobody
	if *started != 2 || rq.asleep.Load() != 0 {
		t.Fatalf("started %d, asleep %d", *started, rq.asleep.Load())
	}
}

func TestRunQueueStopDrainsOrAborts(t *testing.T) {
	rq, _ := newTestQueue(1)
	rq.push(laneTask("last"))
	rq.stop(false)
	if tk, ok := rq.pop(noSteal, false); !ok || tk.l.key != "last" {
		t.Fatalf("draining: the queued task still runs, got %v %v", tk.l, ok)
	}
	if _, ok := rq.pop(noSteal, false); ok {
		t.Fatal("draining and empty: the worker exits")
	}
	rq.push(laneTask("late"))
	rq.stop(true)
	if _, ok := rq.pop(noSteal, false); ok {
		t.Fatal("aborting: the worker exits at once")
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRingAndQueueKeepOrder(t *testing.T) {
	var r ring[int]
	for i := 0; i < 10; i++ {
		r.pushBack(i)
	}
	r.pushFront(-1)
	if r.popFront() != -1 || r.popBack() != 9 || r.len() != 9 {
		t.Fatal("ring order")
	}
	pool := &segPool[int]{shared: new(sync.Pool)}
	q := queue[int]{pool: pool}
	for i := 0; i < 100; i++ {
		q.pushBack(item[int]{ev: i})
	}
	q.prependAll([]item[int]{{ev: -2}, {ev: -1}})
	if q.front().ev != -2 || q.back().ev != 99 || q.len() != 102 {
		t.Fatalf("front %d back %d len %d", q.front().ev, q.back().ev, q.len())
	}
	if old, ok := q.removeFirst(func(it *item[int]) bool { return it.ev >= 0 }); !ok || old.ev != 0 {
		t.Fatalf("removeFirst %v %v", old, ok)
	}
	n := q.filter(func(it *item[int]) bool { return it.ev%2 == 0 }, func(item[int]) {})
	if n != 50 || q.len() != 51 { // -2 and 2..98 even; -1 and the odd ones stay
		t.Fatalf("filter removed %d, left %d", n, q.len())
	}
	got := q.popWhile(nil, 10, func(it *item[int]) bool { return it.ev < 5 })
	if len(got) != 3 || got[0].ev != -1 || got[2].ev != 3 {
		t.Fatalf("popWhile %v", got)
	}
}

func noSteal() bool { return false }

// A worker's deque: the owner takes from the front, in the order pushed; a
// thief takes the back half (at least one), keeping its order.
func TestDequeOwnerAndThief(t *testing.T) {
	var owner, thief deque[string, int]
	var ls []*lane[string, int]
	for i := 0; i < 5; i++ {
		ls = append(ls, &lane[string, int]{key: itoa(i)})
	}
	if n := owner.pushAll(ls); n != 5 {
		t.Fatalf("length %d", n)
	}
	if l := owner.popFront(); l.key != "0" {
		t.Fatalf("owner took %s first", l.key)
	}
	var scratch []*lane[string, int]
	if !owner.stealHalf(&thief, &scratch) || thief.len() != 2 || owner.len() != 2 {
		t.Fatalf("steal: thief %d, owner %d", thief.len(), owner.len())
	}
	if a, b := thief.popFront(), thief.popFront(); a.key != "3" || b.key != "4" {
		t.Fatalf("the thief took %s %s, want the back half 3 4 in order", a.key, b.key)
	}
	if l := owner.popFront(); l.key != "1" {
		t.Fatalf("owner went on with %s", l.key)
	}
	var empty deque[string, int]
	if empty.stealHalf(&thief, &scratch) || empty.popFront() != nil {
		t.Fatal("an empty deque gives nothing")
	}
}

// pop looks for lanes to steal before it sleeps, and returns when it found
// some, so the worker runs them from its deque.
func TestRunQueuePopStealsBeforeSleeping(t *testing.T) {
	rq, _ := newTestQueue(1)
	stole := 0
	tk, ok := rq.pop(func() bool { stole++; return true }, false)
	if !ok || tk.l != nil || tk.s != nil || stole != 1 {
		t.Fatalf("pop with work to steal: %v %v, looked %d times", tk, ok, stole)
	}
}
