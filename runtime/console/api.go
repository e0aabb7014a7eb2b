package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Paging limits of the API and the pages.
const (
	defaultLimit = 100
	maxLimit     = 1000
)

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

// query is a read's parameters.
type query struct {
	entity, subscriber, key string
	after                   uint64
	offset, limit           int
}

// errBadQuery marks a query parameter that does not parse.
var errBadQuery = errors.New("console: bad query")

// parseQuery reads the parameters named in want, which must be present
// (entity, subscriber, key), and the optional paging ones.
func parseQuery(r *http.Request, want ...string) (query, error) {
	v := r.URL.Query()
	q := query{entity: v.Get("entity"), subscriber: v.Get("subscriber"), key: v.Get("key"), limit: defaultLimit}
	for _, name := range want {
		if !v.Has(name) || (name != "key" && v.Get(name) == "") {
			return q, fmt.Errorf("%w: %s is missing", errBadQuery, name)
		}
	}
	var err error
	if s := v.Get("after"); s != "" {
		if q.after, err = strconv.ParseUint(s, 10, 64); err != nil {
			return q, fmt.Errorf("%w: after %q is not a sequence number", errBadQuery, s)
		}
	}
	if s := v.Get("offset"); s != "" {
		if q.offset, err = strconv.Atoi(s); err != nil || q.offset < 0 {
			return q, fmt.Errorf("%w: offset %q is not a count", errBadQuery, s)
		}
	}
	if s := v.Get("limit"); s != "" {
		if q.limit, err = strconv.Atoi(s); err != nil || q.limit < 1 || q.limit > maxLimit {
			return q, fmt.Errorf("%w: limit %q is not between 1 and %d", errBadQuery, s, maxLimit)
		}
	}
	return q, nil
}

func (c *Console) apiOverview(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, c.overview(r.Context()))
}

func (c *Console) apiParked(w http.ResponseWriter, r *http.Request) {
	p, err := c.parked(r)
	if err != nil {
		writeError(w, readStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// parked reads a page of parked keys for api/parked and the parked page.
func (c *Console) parked(r *http.Request) (parkedPage, error) {
	q, err := parseQuery(r, "entity", "subscriber")
	if err != nil {
		return parkedPage{}, err
	}
	in, err := c.inspector(r.Context(), q.entity)
	if err != nil {
		return parkedPage{}, err
	}
	keys, total, err := in.ParkedKeys(r.Context(), q.subscriber, q.offset, q.limit)
	if err != nil {
		return parkedPage{}, err
	}
	return parkedPage{Entity: q.entity, Subscriber: q.subscriber, Total: total, Offset: q.offset, Keys: parkedKeysOf(keys)}, nil
}

func (c *Console) apiEvents(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r, "entity", "subscriber", "key")
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	in, err := c.inspector(r.Context(), q.entity)
	if err != nil {
		writeError(w, readStatus(err), err)
		return
	}
	p, err := c.events(r.Context(), in, q.subscriber, q.key, q.after, q.limit)
	if err != nil {
		writeError(w, readStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (c *Console) apiKey(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r, "entity", "subscriber", "key")
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	in, err := c.inspector(r.Context(), q.entity)
	if err != nil {
		writeError(w, readStatus(err), err)
		return
	}
	k, err := c.key(r.Context(), in, q.subscriber, q.key)
	if err != nil {
		writeError(w, readStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, k)
}

func (c *Console) apiActions(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"read_only": c.readOnly(), "actions": c.log.latest(100)})
}

func (c *Console) apiAction(verb string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rec, err := c.mutate(r, verb)
		if rf, ok := err.(*refusal); ok {
			writeError(w, rf.code, rf)
			return
		}
		writeJSON(w, rec.code, rec)
	}
}

// readStatus returns the status code of a read's error.
func readStatus(err error) int {
	if errors.Is(err, errBadQuery) {
		return http.StatusBadRequest
	}
	return statusOf(err)
}

// sampleView is one sample of api/history. Handled and Failed are counters
// (rates are their differences); Pending and OldestAge are absent for a
// subscriber seen through a store.
type sampleView struct {
	At        time.Time `json:"at"`
	Handled   uint64    `json:"handled"`
	Failed    uint64    `json:"failed"`
	Pending   *int64    `json:"pending,omitempty"`
	OldestAge *seconds  `json:"oldest_age_seconds,omitempty"`
	Parked    int64     `json:"parked"`
}

func (c *Console) apiHistory(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r, "entity", "subscriber")
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if _, err := c.inspector(r.Context(), q.entity); err != nil {
		writeError(w, readStatus(err), err)
		return
	}
	samples := c.history.of(subscriberID{q.entity, q.subscriber})
	out := make([]sampleView, len(samples))
	for i, s := range samples {
		out[i] = sampleView{At: time.Unix(0, s.at).UTC(), Handled: s.handled, Failed: s.failed, Parked: s.parked}
		if s.pending >= 0 {
			pending, oldest := s.pending, seconds(s.oldest)
			out[i].Pending, out[i].OldestAge = &pending, &oldest
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"entity": q.entity, "subscriber": q.subscriber,
		"interval_seconds": c.history.every.Seconds(), "samples": out,
	})
}
