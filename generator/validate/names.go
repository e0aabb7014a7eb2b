package validate

import (
	"go/token"
	"unicode"
	"unicode/utf8"

	"github.com/ordergen/ordergen/generator/diag"
)

// exported reports whether s is a valid exported Go identifier.
func exported(s string) bool {
	return token.IsIdentifier(s) && token.IsExported(s)
}

// checkExported reports s unless it is a valid exported Go identifier.
func (v *validator) checkExported(s string, pos diag.Pos, what string) bool {
	if exported(s) {
		return true
	}
	if token.IsIdentifier(s) {
		v.errs.Add(pos, "%s %q must start with an upper-case letter (it becomes an exported Go name)", what, s)
	} else {
		v.errs.Add(pos, "%s %q is not a valid Go identifier", what, s)
	}
	return false
}

// lowerFirst returns s with its first letter in lower case.
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

// declared is a name taken in a scope of the generated code.
type declared struct {
	what string
	pos  diag.Pos
}

// scope detects clashing names in one namespace of the generated code
// (the package block, or the members of one type).
type scope struct {
	v     *validator
	names map[string]declared
}

func (v *validator) newScope() *scope {
	return &scope{v: v, names: make(map[string]declared)}
}

// declare takes name for what, declared at pos, and reports a clash at
// the later of the two declarations.
func (s *scope) declare(name string, pos diag.Pos, what string) bool {
	prev, taken := s.names[name]
	if !taken {
		s.names[name] = declared{what: what, pos: pos}
		return true
	}
	here, there := what, prev
	if later(prev.pos, pos) == prev.pos && prev.pos != pos {
		// The earlier-taken name was declared later in the file.
		here, there = prev.what, declared{what: what, pos: pos}
		s.v.errs.Add(prev.pos, "%s clashes with %s (line %d): both are named %s in the generated code", here, there.what, there.pos.Line, name)
		return false
	}
	s.v.errs.Add(pos, "%s clashes with %s (line %d): both are named %s in the generated code", here, there.what, there.pos.Line, name)
	return false
}
