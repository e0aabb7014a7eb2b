package console

import (
	"context"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/inspect"
)

// The views below are both the JSON API's documents and what the pages
// render.

// overview is the front page: every entity, the transports and the latest
// actions.
type overview struct {
	Title      string          `json:"title"`
	ReadOnly   bool            `json:"read_only"`
	StuckAfter seconds         `json:"stuck_after_seconds"`
	Entities   []entityView    `json:"entities"`
	Transports []transportView `json:"transports"`
	Actions    []actionRecord  `json:"actions"`
	Error      string          `json:"error,omitempty"`
}

type entityView struct {
	Entity      string           `json:"entity"`
	Subscribers []subscriberView `json:"subscribers"`
	Requests    []requestView    `json:"requests,omitempty"`
	// Error says what could not be read; the rest is what could.
	Error string `json:"error,omitempty"`
}

type subscriberView struct {
	Entity       string        `json:"-"`
	Name         string        `json:"name"`
	Live         bool          `json:"live"`
	Stats        *statsView    `json:"stats,omitempty"`
	Limits       *limitsView   `json:"limits,omitempty"`
	Backlog      []backlogView `json:"backlog"`
	Stuck        []backlogView `json:"stuck"`
	ParkedKeys   int           `json:"parked_keys"`
	ParkedEvents int           `json:"parked_events"`
	// Parked are the first parked keys (all of them through api/parked).
	Parked []parkedKeyView `json:"parked"`
	// What the card of the subscriber needs besides (not in the JSON):
	// its last-hour charts, large on its own page, and the console's
	// StuckAfter and read-only state.
	Charts      []chartView `json:"-"`
	ChartsLarge bool        `json:"-"`
	StuckAfter  seconds     `json:"-"`
	ReadOnly    bool        `json:"-"`
}

type statsView struct {
	Accepted uint64 `json:"accepted"`
	Restored uint64 `json:"restored"`
	Handled  uint64 `json:"handled"`
	// Skipped counts every skip; GuardSkipped and Unimplemented are its
	// two parts: what the guards (or handlers) skipped, and the events a
	// handler did not implement, acknowledged as if applied.
	Skipped       uint64 `json:"skipped"`
	GuardSkipped  uint64 `json:"guard_skipped"`
	Unimplemented uint64 `json:"unimplemented"`
	Retried       uint64 `json:"retried"`
	DeadLettered  uint64 `json:"dead_lettered"`
	Dropped       uint64 `json:"dropped"`
	Discarded     uint64 `json:"discarded"`
	Conflated     uint64 `json:"conflated"`
	Withdrawn     uint64 `json:"withdrawn"`
	Rejected      uint64 `json:"rejected"`
	Replayed      uint64 `json:"replayed"`
	Pending       int64  `json:"pending"`
	Held          int64  `json:"held"`
	Parked        int64  `json:"parked"`
	ParkedKeys    int64  `json:"parked_keys"`
	Lanes         int64  `json:"lanes"`
}

func statsOf(s runtime.Stats) *statsView {
	return &statsView{
		Accepted: s.Accepted, Restored: s.Restored, Handled: s.Handled, Retried: s.Retried,
		Skipped: s.Skipped, GuardSkipped: s.Skipped - s.Unimplemented, Unimplemented: s.Unimplemented,
		DeadLettered: s.DeadLettered, Dropped: s.Dropped, Discarded: s.Discarded, Conflated: s.Conflated,
		Withdrawn: s.Withdrawn, Rejected: s.Rejected, Replayed: s.Replayed,
		Pending: s.Pending, Held: s.Held, Parked: s.Parked, ParkedKeys: s.ParkedKeys, Lanes: s.Lanes,
	}
}

type limitsView struct {
	MaxActive     int    `json:"max_active"`
	PerKey        int    `json:"per_key"`
	Total         int    `json:"total"`
	WhenFull      string `json:"when_full"`
	OnExhausted   string `json:"on_exhausted"`
	ParksInMemory bool   `json:"parks_in_memory"`
}

// seconds is a duration that JSON shows in seconds.
type seconds time.Duration

func (s seconds) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(s).Seconds()) }

type backlogView struct {
	Key       string  `json:"key"`
	Pending   int     `json:"pending"`
	OldestAge seconds `json:"oldest_age_seconds"`
}

func backlogOf(kbs []inspect.KeyBacklog) []backlogView {
	out := make([]backlogView, len(kbs))
	for i, kb := range kbs {
		out[i] = backlogView{Key: kb.Key, Pending: kb.Pending, OldestAge: seconds(kb.OldestAge)}
	}
	return out
}

type parkedKeyView struct {
	Key      string    `json:"key"`
	Reason   string    `json:"reason"`
	Events   int       `json:"events"`
	Since    time.Time `json:"since"`
	Attempts int       `json:"attempts"`
	Error    string    `json:"error,omitempty"`
}

func parkedKeysOf(pks []inspect.ParkedKey) []parkedKeyView {
	out := make([]parkedKeyView, len(pks))
	for i, pk := range pks {
		out[i] = parkedKeyView{Key: pk.Key, Reason: pk.Reason, Events: pk.Events, Since: pk.Since, Attempts: pk.Attempts, Error: pk.Error}
	}
	return out
}

type parkedPage struct {
	Entity     string          `json:"entity"`
	Subscriber string          `json:"subscriber"`
	Total      int             `json:"total"`
	Offset     int             `json:"offset"`
	Keys       []parkedKeyView `json:"keys"`
}

type eventView struct {
	Seq  uint64 `json:"seq"`
	Name string `json:"name"`
	// Data is the event's encoding: its JSON when it is JSON, else a string.
	Data     json.RawMessage `json:"data"`
	Error    string          `json:"error,omitempty"`
	Attempts int             `json:"attempts"`
	At       time.Time       `json:"at"`
}

func eventsOf(evs []inspect.ParkedEvent) []eventView {
	out := make([]eventView, len(evs))
	for i, ev := range evs {
		out[i] = eventView{Seq: ev.Seq, Name: ev.Name, Data: asJSON(ev.Data), Error: ev.Error, Attempts: ev.Attempts, At: ev.At}
	}
	return out
}

// asJSON returns data when it is JSON, and otherwise data as a JSON string
// (its text, or its bytes in base64 when it is not UTF-8).
func asJSON(data []byte) json.RawMessage {
	if json.Valid(data) {
		return data
	}
	var v any = data // base64
	if utf8.Valid(data) {
		v = string(data)
	}
	out, _ := json.Marshal(v)
	return out
}

type eventsPage struct {
	Entity     string      `json:"entity"`
	Subscriber string      `json:"subscriber"`
	Key        string      `json:"key"`
	After      uint64      `json:"after"`
	Events     []eventView `json:"events"`
	// Next is the after of the next page; absent when there is none.
	Next uint64 `json:"next,omitempty"`
}

type keyView struct {
	Entity     string    `json:"entity"`
	Subscriber string    `json:"subscriber"`
	Key        string    `json:"key"`
	Parked     bool      `json:"parked"`
	Reason     string    `json:"reason,omitempty"`
	Events     int       `json:"events"`
	Since      time.Time `json:"since,omitzero"`
	Version    *uint64   `json:"version,omitempty"`
	State      string    `json:"state,omitempty"`
	// Live is true when the subscriber runs in this process: then Pending
	// is the key's events without an outcome, OldestAge the age of the
	// oldest, and Stuck says whether it is older than StuckAfter.
	Live      bool    `json:"live"`
	Pending   int     `json:"pending"`
	OldestAge seconds `json:"oldest_age_seconds"`
	Stuck     bool    `json:"stuck"`
	// Running is the attempt of the key's handler in progress, if one is.
	Running *runningView `json:"running,omitempty"`
	// Operable is true when the console can cancel the key's running
	// attempt and park it now (its inspector is an inspect.KeyOperator).
	Operable bool `json:"operable"`
}

// runningView is an attempt in progress. Without Known, only that the key
// runs is known (the engine gives its attempts no context of their own).
type runningView struct {
	Known   bool            `json:"known"`
	Name    string          `json:"name,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	Version *uint64         `json:"version,omitempty"`
	Batch   int             `json:"batch,omitempty"`
	Attempt int             `json:"attempt,omitempty"`
	Started time.Time       `json:"started,omitzero"`
	// For is how long its handler has run.
	For   seconds `json:"running_seconds"`
	Ended string  `json:"context_ended,omitempty"`
}

type requestView struct {
	ID         int64     `json:"id"`
	Action     string    `json:"action"`
	Subscriber string    `json:"subscriber"`
	Key        string    `json:"key"`
	Requested  time.Time `json:"requested"`
	Claimed    time.Time `json:"claimed,omitzero"`
	Done       time.Time `json:"done,omitzero"`
	Result     string    `json:"result,omitempty"`
}

type transportView struct {
	// Index is the transport's place in Config.Transports, which an
	// outbox's mutation names.
	Index      int               `json:"index"`
	Kind       string            `json:"kind"`
	Name       string            `json:"name"`
	Counters   []inspect.Counter `json:"counters"`
	Partitions []partitionView   `json:"partitions"`
	// Unit is what a row of the page's table is (its first column), and
	// None what the card says when there is no row: an outbox's rows are
	// its keys that do not flow, and none is good news, not "no partitions
	// held".
	Unit, None string `json:"-"`
	// Actions is true when its outbox's keys can be retried and discarded
	// (an inspect.OutboxOperator).
	Actions bool `json:"actions"`
	// ReadOnly is the console's (not in the JSON), for the page.
	ReadOnly bool `json:"-"`
}

type partitionView struct {
	Name             string  `json:"name"`
	Lag              int64   `json:"lag"`
	Unfinished       int     `json:"unfinished"`
	Parked           int     `json:"parked"`
	OldestUnfinished seconds `json:"oldest_unfinished_seconds"`
	Paused           string  `json:"paused,omitempty"`
	Detail           string  `json:"detail,omitempty"`
	// Entity and Key name the outbox's key that the partition is, when the
	// transport acts on it.
	Entity string `json:"entity,omitempty"`
	Key    string `json:"key,omitempty"`
}

// outboxKind is the Kind of the transactional outbox's transport status
// (runtime/outbox's Relay, ordergen-parked's view of a store), whose
// partitions are the keys that do not flow.
const outboxKind = "outbox"

// overviewParked is how many parked keys the overview lists per subscriber.
const overviewParked = 20

// requestsShown is how many requests the overview lists per entity.
const requestsShown = 10

// overview gathers the front page. What cannot be read is said in the
// entity's Error, and the rest is shown.
func (c *Console) overview(ctx context.Context) overview {
	o := overview{Title: c.cfg.Title, ReadOnly: c.readOnly(), StuckAfter: seconds(c.cfg.StuckAfter), Actions: c.log.latest(20)}
	ins, err := c.inspectors(ctx)
	if err != nil {
		o.Error = err.Error()
	}
	for _, in := range ins {
		o.Entities = append(o.Entities, c.entity(ctx, in))
	}
	for i, t := range c.cfg.Transports {
		tv := transportOf(t.TransportStatus())
		_, tv.Actions = t.(inspect.OutboxOperator)
		tv.Index, tv.ReadOnly = i, c.readOnly()
		o.Transports = append(o.Transports, tv)
	}
	return o
}

// entity gathers an entity's part of the overview, with small charts.
func (c *Console) entity(ctx context.Context, in inspect.Inspector) entityView {
	return c.entityCharts(ctx, in, smallChart)
}

// entityCharts is entity with charts of the given size.
func (c *Console) entityCharts(ctx context.Context, in inspect.Inspector, chart [2]int) entityView {
	ev := entityView{Entity: in.Entity()}
	subs, err := in.Subscribers(ctx, inspect.Query{Top: c.cfg.Top, StuckAfter: c.cfg.StuckAfter})
	if err != nil {
		ev.Error = err.Error()
		return ev
	}
	for _, s := range subs {
		sv := subscriberView{
			Entity: ev.Entity, Name: s.Name, Live: s.Live,
			Backlog: backlogOf(s.Backlog), Stuck: backlogOf(s.Stuck),
			ParkedKeys: s.ParkedKeys, ParkedEvents: s.ParkedEvents,
			Charts: c.charts(subscriberID{ev.Entity, s.Name}, s.Live, chart), ChartsLarge: chart == largeChart,
			StuckAfter: seconds(c.cfg.StuckAfter), ReadOnly: c.readOnly(),
		}
		if s.Live {
			sv.Stats = statsOf(s.Stats)
			l := s.Limits
			sv.Limits = &limitsView{MaxActive: l.MaxActive, PerKey: l.PerKey, Total: l.Total, WhenFull: l.WhenFull,
				OnExhausted: l.OnExhausted, ParksInMemory: l.ParksInMemory}
		}
		if s.ParkedKeys > 0 || !s.Live {
			pks, total, err := in.ParkedKeys(ctx, s.Name, 0, overviewParked)
			if err != nil {
				ev.Error = err.Error()
			}
			sv.Parked = parkedKeysOf(pks)
			sv.ParkedKeys = max(sv.ParkedKeys, total)
		}
		ev.Subscribers = append(ev.Subscribers, sv)
	}
	if rq, ok := in.(inspect.Requester); ok {
		reqs, err := rq.Requests(ctx, requestsShown)
		if err != nil {
			ev.Error = err.Error()
		}
		for _, r := range reqs {
			ev.Requests = append(ev.Requests, requestView{ID: r.ID, Action: r.Action, Subscriber: r.Subscriber, Key: r.Key,
				Requested: r.Requested, Claimed: r.Claimed, Done: r.Done, Result: r.Result})
		}
	}
	return ev
}

func transportOf(s inspect.TransportStatus) transportView {
	tv := transportView{Kind: s.Kind, Name: s.Name, Counters: s.Counters, Partitions: []partitionView{},
		Unit: "partition", None: "No partitions held now."}
	if s.Kind == outboxKind {
		tv.Unit, tv.None = "key", "No key stopped: none parked or retrying."
	}
	if tv.Counters == nil {
		tv.Counters = []inspect.Counter{}
	}
	for _, p := range s.Partitions {
		tv.Partitions = append(tv.Partitions, partitionView{Name: p.Name, Lag: p.Lag, Unfinished: p.Unfinished, Parked: p.Parked,
			OldestUnfinished: seconds(p.OldestUnfinished), Paused: p.Paused, Detail: p.Detail, Entity: p.Entity, Key: p.Key})
	}
	return tv
}

// key gathers a key's page, or its JSON.
func (c *Console) key(ctx context.Context, in inspect.Inspector, subscriber, key string) (keyView, error) {
	k, err := in.Key(ctx, subscriber, key)
	if err != nil {
		return keyView{}, err
	}
	kv := keyView{Entity: in.Entity(), Subscriber: subscriber, Key: key, Parked: k.Parked, Reason: k.Reason,
		Events: k.Events, Since: k.Since, State: k.State,
		Live: k.Live, Pending: k.Pending, OldestAge: seconds(k.OldestAge), Stuck: k.Pending > 0 && k.OldestAge > c.cfg.StuckAfter}
	if k.HasVersion {
		kv.Version = &k.Version
	}
	_, kv.Operable = in.(inspect.KeyOperator)
	if r := k.Running; r != nil {
		rv := &runningView{Known: r.Known, Name: r.Name, Batch: r.Batch, Attempt: r.Attempt, Started: r.Started, Ended: r.Ended}
		if r.Known {
			rv.Data = asJSON(r.Data)
			rv.For = seconds(max(time.Since(r.Started), 0))
		}
		if r.HasVersion {
			rv.Version = &r.Version
		}
		kv.Running = rv
	}
	return kv, nil
}

// events reads a page of a key's parked events: limit of them after after,
// and whether more follow.
func (c *Console) events(ctx context.Context, in inspect.Inspector, subscriber, key string, after uint64, limit int) (eventsPage, error) {
	evs, err := in.ParkedEvents(ctx, subscriber, key, after, limit+1)
	if err != nil {
		return eventsPage{}, err
	}
	p := eventsPage{Entity: in.Entity(), Subscriber: subscriber, Key: key, After: after}
	if len(evs) > limit {
		evs = evs[:limit]
		p.Next = evs[len(evs)-1].Seq
	}
	p.Events = eventsOf(evs)
	return p, nil
}
