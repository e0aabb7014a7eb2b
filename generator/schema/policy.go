package schema

import "github.com/ordergen/ordergen/generator/diag"

// policyKeys are the policy keys of defaults: and of an entity, in the
// order messages list them, each with the keys of its mapping (none for a
// key that holds one value). Adding a policy key starts here: its values
// arrive in Policies.Values under "key" or "key.sub", and validate reads
// them (see CONTRIBUTING.md).
var policyKeys = []struct {
	key  string
	subs []string
}{
	{"delivery", nil},
	{"retry", []string{"attempts", "initial", "max", "multiplier", "jitter"}},
	{"timeout", nil},
	{"on_exhausted", nil},
	{"backlog", []string{"per_key", "total", "when_full", "wait"}},
	{"lanes", []string{"max_active"}},
	{"resequencer", []string{"max_events", "max_wait"}},
	{"group", []string{"max_events", "linger"}},
}

// Policies are the delivery settings of defaults: or of an entity.
type Policies struct {
	// Values are the settings given, by key: "timeout" for a key of one
	// value, "retry.attempts" for a key of a mapping (PolicyKeys lists
	// them). A key not given is absent.
	Values map[string]*Scalar
	// Groups are where the mappings given start, by key ("retry"): the
	// position of the mapping, but for resequencer, whose key's is kept,
	// which messages about the whole of it name.
	Groups map[string]diag.Pos
}

// Value returns the setting of key (as PolicyKeys names it), nil when it
// was not given.
func (p *Policies) Value(key string) *Scalar {
	if p == nil {
		return nil
	}
	return p.Values[key]
}

// Group returns where the mapping of key starts, and whether it was given.
func (p *Policies) Group(key string) (diag.Pos, bool) {
	if p == nil {
		return diag.Pos{}, false
	}
	pos, ok := p.Groups[key]
	return pos, ok
}

// PolicyKeys returns the keys of Policies.Values, in the order of the
// schema's documentation: "delivery", "retry.attempts", ...
func PolicyKeys() []string {
	var out []string
	for _, k := range policyKeys {
		if k.subs == nil {
			out = append(out, k.key)
		}
		for _, s := range k.subs {
			out = append(out, k.key+"."+s)
		}
	}
	return out
}

// policyKeyNames returns the top-level policy keys.
func policyKeyNames() []string {
	out := make([]string, len(policyKeys))
	for i, k := range policyKeys {
		out[i] = k.key
	}
	return out
}

// policy loads e, one entry whose key is a policy key, into p; where names
// the mapping it is in, for messages.
func (l *loader) policy(p *Policies, e entry, where string) {
	if p.Values == nil {
		p.Values, p.Groups = make(map[string]*Scalar), make(map[string]diag.Pos)
	}
	what := e.key.Value + " in " + where
	for _, k := range policyKeys {
		if k.key != e.key.Value {
			continue
		}
		if k.subs == nil {
			p.Values[k.key] = l.scalar(e.val, what)
			return
		}
		p.Groups[k.key] = pos(e.val)
		if k.key == "resequencer" {
			p.Groups[k.key] = pos(e.key)
		}
		for _, se := range l.fields(e.val, what, false, k.subs...) {
			p.Values[k.key+"."+se.key.Value] = l.scalar(se.val, k.key+"."+se.key.Value)
		}
		return
	}
}
