package validate

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ordergen/ordergen/generator/diag"
	"github.com/ordergen/ordergen/generator/schema"
)

// Wire names: the names of fields in encoded events. The default is the Go
// field name, because parks and topics already hold events encoded that
// way; a schema may set a naming rule for all fields (wire_names:, at the
// top or per entity) and a name per field (wire:).

// wireRules are the naming rules of wire_names, by name.
var wireRules = map[string]func(string) string{
	"go":         func(s string) string { return s },
	"snake_case": snakeCase,
	"camelCase":  camelCase,
}

// wireRuleNames lists the rules in the order messages give them.
var wireRuleNames = []string{"go", "snake_case", "camelCase"}

// validWire is what a wire name may be: a JSON object key that needs no
// escaping in a struct tag.
var validWire = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.\-]*$`)

// wireRule returns the naming rule s names, or inherited when s is nil or
// malformed (reported).
func (v *validator) wireRule(s *schema.Scalar, inherited func(string) string) func(string) string {
	if s == nil || s.Tag == schema.BadTag {
		return inherited
	}
	if rule, ok := wireRules[s.Value]; ok && s.Tag == "!!str" {
		return rule
	}
	v.errs.Add(s.Pos, "wire_names must be %s, not %q%s", oneOf(wireRuleNames), s.Value, diag.Suggest(s.Value, wireRuleNames))
	return inherited
}

// wireName returns the wire name of the Go field goName: explicit when
// set (and valid), else what rule makes of goName.
func (v *validator) wireName(goName string, explicit *schema.Scalar, rule func(string) string) string {
	if explicit == nil || explicit.Tag == schema.BadTag {
		return rule(goName)
	}
	if explicit.Tag != "!!str" && explicit.Tag != "!!int" || !validWire.MatchString(explicit.Value) {
		v.errs.Add(explicit.Pos, "wire name %q of field %s: use letters, digits, _, . and - (not first)", explicit.Value, goName)
		return rule(goName)
	}
	return explicit.Value
}

// wireScope detects two fields of one event with the same wire name. JSON
// decoding matches names without regard to case, so neither does it.
type wireScope map[string]wireUse

type wireUse struct {
	field string
	pos   diag.Pos
}

func (v *validator) declareWire(s wireScope, wire, field string, pos diag.Pos) {
	k := strings.ToLower(wire)
	if prev, taken := s[k]; taken && prev.field != field {
		v.errs.Add(pos, "field %s has the wire name %q of field %s (line %d): wire names of an event must differ, ignoring case", field, wire, prev.field, prev.pos.Line)
		return
	}
	s[k] = wireUse{field: field, pos: pos}
}

// words splits a Go identifier into its words: AccountID gives Account
// and ID, HTTPServer gives HTTP and Server, Field2Name gives Field2 and
// Name.
func words(s string) []string {
	rs := []rune(s)
	var out []string
	start := 0
	for i := 1; i < len(rs); i++ {
		prev, cur := rs[i-1], rs[i]
		next := rune(0)
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		boundary := unicode.IsUpper(cur) && (unicode.IsLower(prev) || unicode.IsDigit(prev) ||
			unicode.IsUpper(prev) && unicode.IsLower(next))
		if cur == '_' || prev == '_' {
			boundary = true
		}
		if boundary {
			if w := strings.Trim(string(rs[start:i]), "_"); w != "" {
				out = append(out, w)
			}
			start = i
		}
	}
	if w := strings.Trim(string(rs[start:]), "_"); w != "" {
		out = append(out, w)
	}
	return out
}

// snakeCase: AccountID gives account_id, OpenedAt opened_at, URL url.
func snakeCase(s string) string {
	ws := words(s)
	for i, w := range ws {
		ws[i] = strings.ToLower(w)
	}
	return strings.Join(ws, "_")
}

// camelCase: AccountID gives accountId, HTTPServer httpServer, URL url.
func camelCase(s string) string {
	ws := words(s)
	for i, w := range ws {
		w = strings.ToLower(w)
		if i > 0 {
			r, n := utf8.DecodeRuneInString(w)
			w = string(unicode.ToUpper(r)) + w[n:]
		}
		ws[i] = w
	}
	return strings.Join(ws, "")
}
