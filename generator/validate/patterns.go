package validate

import (
	"strings"
	"time"

	"github.com/ordergen/ordergen/generator/diag"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/schema"
	"github.com/ordergen/ordergen/runtime"
)

// patterns checks and resolves how e's events are handled beyond one at a
// time in order: on_gap, batch and notification, and the combinations of
// them (and of the other keys) that make no sense. out's events are
// resolved; p is its policy, which a batch completes.
func (v *validator) patterns(e *schema.Entity, out *ir.Entity, p *ir.Policy) {
	name := e.Name.Value
	if n := e.Notification; n != nil {
		if n.Tag != "!!bool" {
			v.errs.Add(n.Pos, "notification must be true or false, not %q", n.Value)
		} else {
			out.Notification = strings.EqualFold(n.Value, "true")
		}
	}
	if g := e.OnGap; g != nil {
		switch {
		case g.Tag == "!!str" && g.Value == "resync":
			out.Resync = true
		case g.Tag == "!!str" && g.Value == "park":
		default:
			allowed := Enumerations()["on_gap"]
			v.errs.Add(g.Pos, "on_gap must be %s, not %q%s", oneOf(allowed), g.Value, diag.Suggest(g.Value, allowed))
			g = nil
		}
		if g != nil && e.Version == nil && !out.Notification {
			v.errs.Add(g.Pos, "on_gap needs a version: entity %s has none, so no event is ever held back on a gap", name)
		}
		if out.Resync && e.Version != nil && !out.Notification && allSnapshots(out) {
			v.errs.Add(g.Pos, "on_gap: resync makes no sense when every event is a snapshot: a snapshot crosses a gap, so no event of entity %s is ever held back", name)
		}
	}
	if b := e.Batch; b != nil {
		out.Batch = !b.Bad
		p.BatchSize = runtime.DefaultBatchSize
		var pol policy
		pol.pos = map[string]diag.Pos{}
		sizeOK := true
		if b.MaxEvents != nil && b.MaxEvents.Tag != schema.BadTag {
			pol.BatchSize = 0
			count(func(p *policy) *int { return &p.BatchSize })(v, &pol, "batch.max_events", b.MaxEvents)
			sizeOK = pol.BatchSize > 0
			if sizeOK {
				p.BatchSize = pol.BatchSize
			}
		}
		if b.Linger != nil && b.Linger.Tag != schema.BadTag {
			duration(func(p *policy) *time.Duration { return &p.Linger })(v, &pol, "batch.linger", b.Linger)
			p.Linger = pol.Linger
		}
		if out.Batch && sizeOK && p.BatchSize > p.Backlog.PerKey {
			at := b.Pos
			if b.MaxEvents != nil {
				at = b.MaxEvents.Pos
			}
			v.errs.Add(at, "batch.max_events %d exceeds backlog.per_key %d: a key never has that many pending events", p.BatchSize, p.Backlog.PerKey)
		}
		if c := e.Conflate; out.Conflate && c != nil && !out.Notification {
			v.errs.Add(later(b.Pos, c.Pos), "batch and conflate: true do not go together: conflation replaces a key's pending event, a batch takes all of them")
		}
	}
	if !out.Notification {
		return
	}
	// A notification says only "this key changed": nothing else may be
	// declared that needs an event's order, version or content.
	why := "a notification carries only its key and the handler fetches the key's current state, so "
	if d := e.Version; d != nil {
		v.errs.Add(d.Pos, "version makes no sense with notification: true: %sthere is nothing to order or deduplicate", why)
	}
	if len(e.States) > 0 {
		v.errs.Add(e.StatesPos, "states make no sense with notification: true: %sno event moves entity %s to a state", why, name)
	}
	if c := e.Conflate; c != nil {
		v.errs.Add(c.Pos, "conflate makes no sense with notification: true: a key's pending notifications are always coalesced into one call")
	}
	if g := e.OnGap; g != nil {
		v.errs.Add(g.Pos, "on_gap makes no sense with notification: true: %sthere is no version to have gaps", why)
	}
	if b := e.Batch; b != nil {
		v.errs.Add(b.Pos, "batch makes no sense with notification: true: a key's pending notifications are coalesced into one call already")
	}
	for _, ev := range e.Events {
		if len(ev.Fields) > 0 {
			v.errs.Add(ev.Fields[0].Name.Pos, "event %s has fields, which make no sense with notification: true: %sit reads them from the source", ev.Name.Value, why)
		}
	}
	out.Conflate = true
}

// allSnapshots reports whether every event of e is a snapshot (and it has
// any).
func allSnapshots(e *ir.Entity) bool {
	for _, ev := range e.Events {
		if !ev.Snapshot {
			return false
		}
	}
	return len(e.Events) > 0
}
