package validate

import (
	"maps"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ordergen/ordergen/generator/diag"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/schema"
	"github.com/ordergen/ordergen/runtime"
)

// policy is a policy being resolved: the runtime's defaults, then the
// schema's defaults, then an entity's overrides, key by key.
type policy struct {
	ir.Policy
	// atMostOnce is delivery: at-most-once, applied by resolve.
	atMostOnce bool
	// pos is where each key's value was written, by key ("retry.initial");
	// absent for a built-in default. The checks that involve two keys
	// report at the later of them.
	pos map[string]diag.Pos
}

// builtinPolicy is the policy when a schema sets nothing: the runtime's
// defaults (runtime/defaults.go), which a runtime.Config's zero fields
// take too, at-least-once delivery and full jitter.
func builtinPolicy() policy {
	return policy{Policy: ir.Policy{
		MaxActive: runtime.DefaultMaxActive,
		Backlog:   runtime.Backlog{PerKey: runtime.DefaultPerKey, Total: runtime.DefaultTotal, WhenFull: runtime.DefaultWhenFull},
		Retry: runtime.Retry{
			Attempts:   runtime.DefaultAttempts,
			Initial:    runtime.DefaultInitial,
			Max:        runtime.DefaultMaxBackoff,
			Multiplier: runtime.DefaultMultiplier,
		},
		Timeout:     runtime.DefaultTimeout,
		OnExhausted: runtime.DefaultOnExhausted,
		MaxHeld:     runtime.DefaultMaxHeld,
		MaxHold:     runtime.DefaultMaxHold,
	}}
}

// policyReaders read each key of schema.PolicyKeys into a policy, in that
// order: a test checks that every key has one.
var policyReaders = []struct {
	key  string
	read func(v *validator, p *policy, key string, s *schema.Scalar)
}{
	{"delivery", func(v *validator, p *policy, key string, s *schema.Scalar) {
		if d, ok := v.enum(p, key, s); ok {
			p.atMostOnce = d == "at-most-once"
		}
	}},
	{"retry.attempts", count(func(p *policy) *int { return &p.Retry.Attempts })},
	{"retry.initial", duration(func(p *policy) *time.Duration { return &p.Retry.Initial })},
	{"retry.max", duration(func(p *policy) *time.Duration { return &p.Retry.Max })},
	{"retry.multiplier", multiplier},
	{"retry.jitter", func(v *validator, p *policy, key string, s *schema.Scalar) {
		if j, ok := v.enum(p, key, s); ok {
			p.Retry.NoJitter = j == "none"
		}
	}},
	{"timeout", duration(func(p *policy) *time.Duration { return &p.Timeout })},
	{"on_exhausted", func(v *validator, p *policy, key string, s *schema.Scalar) {
		if name, ok := v.enum(p, key, s); ok {
			p.OnExhausted = byName(runtime.ExhaustedPolicies(), name)
		}
	}},
	{"backlog.per_key", count(func(p *policy) *int { return &p.Backlog.PerKey })},
	{"backlog.total", count(func(p *policy) *int { return &p.Backlog.Total })},
	{"backlog.when_full", func(v *validator, p *policy, key string, s *schema.Scalar) {
		if name, ok := v.enum(p, key, s); ok {
			p.Backlog.WhenFull = byName(runtime.FullPolicies(), name)
			// A new policy drops a wait inherited for another one.
			if p.Backlog.WhenFull != runtime.BlockThenReject {
				p.Backlog.Wait = 0
				delete(p.pos, "backlog.wait")
			}
		}
	}},
	{"backlog.wait", duration(func(p *policy) *time.Duration { return &p.Backlog.Wait })},
	{"lanes.max_active", count(func(p *policy) *int { return &p.MaxActive })},
	{"resequencer.max_events", count(func(p *policy) *int { return &p.MaxHeld })},
	{"resequencer.max_wait", duration(func(p *policy) *time.Duration { return &p.MaxHold })},
	{"group.max_events", count(func(p *policy) *int { return &p.Group.MaxEvents })},
	{"group.linger", lingerDuration(func(p *policy) *time.Duration { return &p.Group.Linger })},
}

// overlay returns base with the values of s written over it, reporting
// every value that is malformed.
func (v *validator) overlay(base policy, s *schema.Policies) policy {
	p := base
	p.pos = maps.Clone(base.pos)
	if p.pos == nil {
		p.pos = make(map[string]diag.Pos)
	}
	for _, r := range policyReaders {
		if sc := s.Value(r.key); sc != nil && sc.Tag != schema.BadTag {
			r.read(v, &p, r.key, sc)
		}
	}
	// group: given at all, even empty, turns group commit on; its values
	// are read above.
	if pos, ok := s.Group("group"); ok {
		p.Group.On = true
		p.set("group", pos)
	}
	return p
}

// set records that key was written at pos.
func (p *policy) set(key string, pos diag.Pos) { p.pos[key] = pos }

// checkPolicy reports the combinations of p that make no sense. Each is
// reported at the latest of the positions involved; a problem inherited
// unchanged from the defaults is reported once, at the defaults.
func (v *validator) checkPolicy(p policy) {
	if p.Retry.Initial > p.Retry.Max {
		v.errs.Add(later(p.pos["retry.initial"], p.pos["retry.max"]), "retry.initial %v exceeds retry.max %v", p.Retry.Initial, p.Retry.Max)
	}
	if p.Backlog.PerKey > p.Backlog.Total {
		v.errs.Add(later(p.pos["backlog.per_key"], p.pos["backlog.total"]), "backlog.per_key %d exceeds backlog.total %d", p.Backlog.PerKey, p.Backlog.Total)
	}
	wait, waitSet := p.pos["backlog.wait"]
	switch timeout := p.Backlog.WhenFull == runtime.BlockThenReject; {
	case timeout && p.Backlog.Wait == 0:
		v.errs.Add(p.pos["backlog.when_full"], "backlog.when_full: timeout needs backlog.wait, how long to wait for room (e.g. wait: 200ms)")
	case !timeout && waitSet:
		v.errs.Add(wait, "backlog.wait is only meaningful with when_full: timeout (when_full is %s)", p.Backlog.WhenFull)
	}
}

// scopeCheck reports the settings of one scope (defaults or one entity)
// that contradict its at-most-once delivery.
func (v *validator) scopeCheck(p policy, s *schema.Policies) {
	if s == nil || !p.atMostOnce {
		return
	}
	if pos, ok := s.Group("retry"); ok {
		v.errs.Add(pos, "retry makes no sense with delivery: at-most-once (an event gets one attempt, and a failure drops it)")
	}
	if oe := s.Value("on_exhausted"); oe != nil {
		v.errs.Add(oe.Pos, "on_exhausted makes no sense with delivery: at-most-once (a failed event is dropped)")
	}
}

// resolve returns the IR's policy of p: at-most-once delivery is one
// attempt, and a failure dropped.
func (p policy) resolve() ir.Policy {
	out := p.Policy
	if p.atMostOnce {
		out.OnExhausted = runtime.DropEvent
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

// byName returns the value of values whose String is name.
func byName[P interface{ String() string }](values []P, name string) P {
	for _, p := range values {
		if p.String() == name {
			return p
		}
	}
	panic("validate: no policy named " + name) // Enumerations lists only names of values
}

// enum returns s, the value of key in p, when it is one of
// Enumerations()[key], and records where it was written; otherwise it
// reports s.
func (v *validator) enum(p *policy, key string, s *schema.Scalar) (string, bool) {
	allowed := Enumerations()[key]
	for _, a := range allowed {
		if s.Value == a && s.Tag == "!!str" {
			p.set(key, s.Pos)
			return a, true
		}
	}
	v.errs.Add(s.Pos, "%s must be %s, not %q%s", key, oneOf(allowed), s.Value, diag.Suggest(s.Value, allowed))
	return "", false
}

func oneOf(allowed []string) string {
	if len(allowed) == 1 {
		return allowed[0]
	}
	return strings.Join(allowed[:len(allowed)-1], ", ") + " or " + allowed[len(allowed)-1]
}

// duration reads a positive Go duration into the field that field gives.
func duration(field func(*policy) *time.Duration) func(*validator, *policy, string, *schema.Scalar) {
	return func(v *validator, p *policy, key string, s *schema.Scalar) {
		d, err := time.ParseDuration(s.Value)
		switch {
		case s.Tag != "!!str" || err != nil:
			v.errs.Add(s.Pos, "%s: %q is not a duration (write it like 250ms, 5s or 1m30s)", key, s.Value)
		case d <= 0:
			v.errs.Add(s.Pos, "%s must be a positive duration, not %s", key, s.Value)
		default:
			*field(p) = d
			p.set(key, s.Pos)
		}
	}
}

// lingerDuration reads a Go duration of zero or more into the field that
// field gives: a linger of 0 means no wait.
func lingerDuration(field func(*policy) *time.Duration) func(*validator, *policy, string, *schema.Scalar) {
	return func(v *validator, p *policy, key string, s *schema.Scalar) {
		d, err := time.ParseDuration(s.Value)
		switch {
		case s.Tag == "!!int" && s.Value == "0":
			*field(p) = 0
			p.set(key, s.Pos)
		case s.Tag != "!!str" || err != nil:
			v.errs.Add(s.Pos, "%s: %q is not a duration (write it like 2ms, 0s or 1m30s)", key, s.Value)
		case d < 0:
			v.errs.Add(s.Pos, "%s must not be negative, not %s", key, s.Value)
		default:
			*field(p) = d
			p.set(key, s.Pos)
		}
	}
}

// count reads a whole number of at least 1 into the field that field
// gives.
func count(field func(*policy) *int) func(*validator, *policy, string, *schema.Scalar) {
	return func(v *validator, p *policy, key string, s *schema.Scalar) {
		n, err := strconv.ParseInt(s.Value, 0, 32)
		switch {
		case s.Tag != "!!int" || err != nil:
			v.errs.Add(s.Pos, "%s must be a whole number, not %q", key, s.Value)
		case n < 1:
			v.errs.Add(s.Pos, "%s must be at least 1, not %d", key, n)
		default:
			*field(p) = int(n)
			p.set(key, s.Pos)
		}
	}
}

func multiplier(v *validator, p *policy, key string, s *schema.Scalar) {
	f, err := strconv.ParseFloat(s.Value, 64)
	switch {
	case s.Tag != "!!int" && s.Tag != "!!float" || err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		v.errs.Add(s.Pos, "%s must be a number, not %q", key, s.Value)
	case f < 1 || f > 1000:
		v.errs.Add(s.Pos, "%s must be between 1 and 1000, not %s", key, s.Value)
	default:
		p.Retry.Multiplier = f
		p.set(key, s.Pos)
	}
}
