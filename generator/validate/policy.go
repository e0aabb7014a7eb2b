package validate

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ordergen/ordergen/generator/diag"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/schema"
)

// setting is one resolved policy value and where it was written (the zero
// Pos for a built-in default).
type setting[T any] struct {
	v   T
	pos diag.Pos
}

func (s *setting[T]) set(v T, pos diag.Pos) { s.v, s.pos = v, pos }

// policy is a policy being resolved: built-in defaults, then the schema's
// defaults, then an entity's overrides, field by field.
type policy struct {
	delivery    setting[string]
	attempts    setting[int]
	initial     setting[time.Duration]
	max         setting[time.Duration]
	multiplier  setting[float64]
	jitter      setting[bool]
	timeout     setting[time.Duration]
	onExhausted setting[string]
	perKey      setting[int]
	total       setting[int]
	whenFull    setting[string]
	wait        setting[time.Duration]
	maxActive   setting[int]
	maxEvents   setting[int]
	maxWait     setting[time.Duration]
}

// builtinPolicy is the policy when a schema sets nothing.
func builtinPolicy() policy {
	var p policy
	p.delivery.v = "at-least-once"
	p.attempts.v = 5
	p.initial.v = 10 * time.Millisecond
	p.max.v = 2 * time.Second
	p.multiplier.v = 2
	p.jitter.v = true
	p.timeout.v = 5 * time.Second
	p.onExhausted.v = "park"
	p.perKey.v = 1000
	p.total.v = 100000
	p.whenFull.v = "reject"
	p.maxActive.v = 256
	p.maxEvents.v = 64
	p.maxWait.v = 30 * time.Second
	return p
}

// overlay returns base with the values of s written over it, reporting
// every value that is malformed.
func (v *validator) overlay(base policy, s *schema.Policies) policy {
	p := base
	if s == nil {
		return p
	}
	v.enum(&p.delivery, s.Delivery, "delivery", "at-least-once", "at-most-once")
	v.duration(&p.timeout, s.Timeout, "timeout")
	v.enum(&p.onExhausted, s.OnExhausted, "on_exhausted", "park", "dead-letter")
	if r := s.Retry; r != nil {
		v.count(&p.attempts, r.Attempts, "retry.attempts")
		v.duration(&p.initial, r.Initial, "retry.initial")
		v.duration(&p.max, r.Max, "retry.max")
		v.multiplier(&p.multiplier, r.Multiplier)
		var jitter setting[string]
		if v.enum(&jitter, r.Jitter, "retry.jitter", "full", "none") {
			p.jitter.set(jitter.v == "full", jitter.pos)
		}
	}
	if b := s.Backlog; b != nil {
		v.count(&p.perKey, b.PerKey, "backlog.per_key")
		v.count(&p.total, b.Total, "backlog.total")
		if v.enum(&p.whenFull, b.WhenFull, "backlog.when_full", "block", "reject", "drop-oldest", "drop-newest", "timeout") {
			// A new policy drops a wait inherited for another one.
			if p.whenFull.v != "timeout" {
				p.wait = setting[time.Duration]{}
			}
		}
		v.duration(&p.wait, b.Wait, "backlog.wait")
	}
	if l := s.Lanes; l != nil {
		v.count(&p.maxActive, l.MaxActive, "lanes.max_active")
	}
	if r := s.Resequencer; r != nil {
		v.count(&p.maxEvents, r.MaxEvents, "resequencer.max_events")
		v.duration(&p.maxWait, r.MaxWait, "resequencer.max_wait")
	}
	return p
}

// check reports the combinations of p that make no sense. Each is reported
// at the latest of the positions involved; a problem inherited unchanged
// from the defaults is reported once, at the defaults.
func (v *validator) checkPolicy(p policy) {
	if p.initial.v > p.max.v {
		v.errs.Add(later(p.initial.pos, p.max.pos), "retry.initial %v exceeds retry.max %v", p.initial.v, p.max.v)
	}
	if p.perKey.v > p.total.v {
		v.errs.Add(later(p.perKey.pos, p.total.pos), "backlog.per_key %d exceeds backlog.total %d", p.perKey.v, p.total.v)
	}
	switch {
	case p.whenFull.v == "timeout" && p.wait.v == 0:
		v.errs.Add(p.whenFull.pos, "backlog.when_full: timeout needs backlog.wait, how long to wait for room (e.g. wait: 200ms)")
	case p.whenFull.v != "timeout" && p.wait.pos.Line > 0:
		v.errs.Add(p.wait.pos, "backlog.wait is only meaningful with when_full: timeout (when_full is %s)", p.whenFull.v)
	}
}

// scopeCheck reports the settings of one scope (defaults or one entity)
// that contradict its at-most-once delivery.
func (v *validator) scopeCheck(p policy, s *schema.Policies) {
	if s == nil || p.delivery.v != "at-most-once" {
		return
	}
	if s.Retry != nil {
		v.errs.Add(s.Retry.Pos, "retry makes no sense with delivery: at-most-once (an event gets one attempt, and a failure drops it)")
	}
	if s.OnExhausted != nil {
		v.errs.Add(s.OnExhausted.Pos, "on_exhausted makes no sense with delivery: at-most-once (a failed event is dropped)")
	}
}

// resolve turns p into the IR's policy.
func resolvePolicy(p policy) ir.Policy {
	out := ir.Policy{
		Retry: ir.Retry{
			Attempts:   p.attempts.v,
			Initial:    p.initial.v,
			Max:        p.max.v,
			Multiplier: p.multiplier.v,
			Jitter:     p.jitter.v,
		},
		Timeout:     p.timeout.v,
		OnExhausted: p.onExhausted.v,
		Backlog:     ir.Backlog{PerKey: p.perKey.v, Total: p.total.v, WhenFull: p.whenFull.v, Wait: p.wait.v},
		MaxActive:   p.maxActive.v,
		MaxHeld:     p.maxEvents.v,
		MaxHold:     p.maxWait.v,
	}
	if p.delivery.v == "at-most-once" {
		out.AtMostOnce = true
		out.OnExhausted = "drop"
		out.Retry.Attempts = 1
	}
	return out
}

func later(a, b diag.Pos) diag.Pos {
	if b.Line > a.Line || b.Line == a.Line && b.Col > a.Col {
		return b
	}
	return a
}

// enum sets dst from s when s is one of allowed, and reports whether it did.
func (v *validator) enum(dst *setting[string], s *schema.Scalar, what string, allowed ...string) bool {
	if s == nil {
		return false
	}
	for _, a := range allowed {
		if s.Value == a && s.Tag == "!!str" {
			dst.set(a, s.Pos)
			return true
		}
	}
	v.errs.Add(s.Pos, "%s must be %s, not %q%s", what, oneOf(allowed), s.Value, diag.Suggest(s.Value, allowed))
	return false
}

func oneOf(allowed []string) string {
	if len(allowed) == 1 {
		return allowed[0]
	}
	return strings.Join(allowed[:len(allowed)-1], ", ") + " or " + allowed[len(allowed)-1]
}

// duration sets dst from s, a positive Go duration.
func (v *validator) duration(dst *setting[time.Duration], s *schema.Scalar, what string) {
	if s == nil {
		return
	}
	d, err := time.ParseDuration(s.Value)
	switch {
	case s.Tag != "!!str" || err != nil:
		v.errs.Add(s.Pos, "%s: %q is not a duration (write it like 250ms, 5s or 1m30s)", what, s.Value)
	case d <= 0:
		v.errs.Add(s.Pos, "%s must be a positive duration, not %s", what, s.Value)
	default:
		dst.set(d, s.Pos)
	}
}

// count sets dst from s, a whole number of at least 1.
func (v *validator) count(dst *setting[int], s *schema.Scalar, what string) {
	if s == nil {
		return
	}
	n, err := strconv.ParseInt(s.Value, 0, 32)
	switch {
	case s.Tag != "!!int" || err != nil:
		v.errs.Add(s.Pos, "%s must be a whole number, not %q", what, s.Value)
	case n < 1:
		v.errs.Add(s.Pos, "%s must be at least 1, not %d", what, n)
	default:
		dst.set(int(n), s.Pos)
	}
}

func (v *validator) multiplier(dst *setting[float64], s *schema.Scalar) {
	if s == nil {
		return
	}
	f, err := strconv.ParseFloat(s.Value, 64)
	switch {
	case s.Tag != "!!int" && s.Tag != "!!float" || err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		v.errs.Add(s.Pos, "retry.multiplier must be a number, not %q", s.Value)
	case f < 1 || f > 1000:
		v.errs.Add(s.Pos, "retry.multiplier must be between 1 and 1000, not %s", s.Value)
	default:
		dst.set(f, s.Pos)
	}
}
