package breaking

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/ordergen/ordergen/generator/diag"
)

// AcceptMarker starts the comment that accepts a known break: written on
// the line of the new schema where breaking reports the change,
//
//	OrderPlaced: {fields: {Total: float64}}  # ordergen:breaking-ok FIELD_SAME_TYPE cents became a decimal amount
//
// it accepts the changes of that rule reported on that line (one change, as
// a rule reports it once per line, but for a wire_names line, where each
// field whose wire name the rule changes is one change of the same
// edit).
const AcceptMarker = "ordergen:breaking-ok"

// markerComment finds the marker in a YAML comment: a # at the start of
// the line or after a space.
var markerComment = regexp.MustCompile(`(^|\s)#\s*` + regexp.QuoteMeta(AcceptMarker) + `\b(.*)$`)

// acceptance is one marker comment.
type acceptance struct {
	pos    diag.Pos
	rule   string
	reason string
	used   bool
}

// Accepted is a change that a marker comment accepted.
type Accepted struct {
	// Change is the change as Compare reported it ("RULE_ID: message").
	Change diag.Diagnostic
	// Reason is the reason the comment gives.
	Reason string
}

// Result is what Accept makes of Compare's changes.
type Result struct {
	// Breaking are the changes no comment accepts.
	Breaking diag.List
	// Accepted are the changes a comment accepts, in order.
	Accepted []Accepted
	// Problems are the marker comments that cannot be used: no rule, an
	// unknown rule, no reason. They are errors.
	Problems diag.List
	// Unused are the marker comments that accept nothing (the break they
	// accepted may be in the older schema now). They are notes.
	Unused diag.List
}

// Accept splits changes, found by Compare against the new schema whose
// text is src, into those that a marker comment on their line accepts and
// the rest.
func Accept(src []byte, changes diag.List) Result {
	var r Result
	byLine := map[int][]*acceptance{}
	for i, line := range bytes.Split(src, []byte("\n")) {
		m := markerComment.FindSubmatchIndex(line)
		if m == nil {
			continue
		}
		hash := bytes.IndexByte(line[m[0]:], '#') + m[0]
		a := &acceptance{pos: diag.Pos{Line: i + 1, Col: hash + 1}}
		rule, reason, _ := strings.Cut(strings.TrimSpace(string(line[m[4]:m[5]])), " ")
		a.rule, a.reason = rule, strings.TrimSpace(reason)
		switch {
		case a.rule == "":
			r.Problems.Add(a.pos, "%s needs a rule ID and a reason: # %s RULE_ID why the break is fine", AcceptMarker, AcceptMarker)
			continue
		case !knownRule(a.rule):
			r.Problems.Add(a.pos, "%s names no rule %q%s (ordergen breaking -rules lists them)", AcceptMarker, a.rule, diag.Suggest(a.rule, ruleIDs()))
			continue
		case a.reason == "":
			r.Problems.Add(a.pos, "%s %s needs a reason: say why the break is fine", AcceptMarker, a.rule)
			continue
		}
		byLine[a.pos.Line] = append(byLine[a.pos.Line], a)
	}
	for _, c := range changes.Items() {
		rule, _, _ := strings.Cut(c.Msg, ": ")
		if a := find(byLine[c.Pos.Line], rule); a != nil {
			a.used = true
			r.Accepted = append(r.Accepted, Accepted{Change: c, Reason: a.reason})
			continue
		}
		r.Breaking.Add(c.Pos, "%s", c.Msg)
	}
	for _, as := range byLine {
		for _, a := range as {
			if !a.used {
				r.Unused.Add(a.pos, "%s %s accepts nothing: no %s change is reported on this line; remove the comment", AcceptMarker, a.rule, a.rule)
			}
		}
	}
	return r
}

func find(as []*acceptance, rule string) *acceptance {
	for _, a := range as {
		if a.rule == rule {
			return a
		}
	}
	return nil
}

func ruleIDs() []string {
	var ids []string
	for _, r := range Rules() {
		ids = append(ids, r.ID)
	}
	return ids
}

func knownRule(id string) bool {
	for _, r := range Rules() {
		if r.ID == id {
			return true
		}
	}
	return false
}
