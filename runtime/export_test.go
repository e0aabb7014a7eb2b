package runtime

// LiveWorkers reports how many of e's worker goroutines are running; tests
// use it to check that Close stops every one.
func LiveWorkers[K comparable, E any](e *Engine[K, E]) int {
	e.rq.mu.Lock()
	defer e.rq.mu.Unlock()
	return e.rq.workers - int(e.exited.Load())
}
