package breaking

import (
	"path"

	"github.com/ordergen/ordergen/generator/diag"
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/schema"
	"github.com/ordergen/ordergen/generator/validate"
)

// Schema is one loaded version of a schema: its syntax, for positions,
// and its resolved model, for meaning.
type Schema struct {
	file *schema.File
	pkg  *ir.Package
}

// Load loads and validates the schema text src. It returns every problem
// found when src is not a valid schema.
func Load(src []byte) (*Schema, diag.List) {
	f, diags := schema.Load(src)
	if f == nil {
		return nil, diags
	}
	pkg, more := validate.Check(f, asWritten{})
	diags.Append(more)
	if diags.Len() > 0 {
		return nil, diags
	}
	return &Schema{file: f, pkg: pkg}, diags
}

// asWritten resolves every qualified type without loading its package:
// breaking compares types as written.
type asWritten struct{}

// Resolve implements validate.Resolver.
func (asWritten) Resolve(refs []validate.Ref) ([]validate.Resolved, []error) {
	out := make([]validate.Resolved, len(refs))
	for i, r := range refs {
		out[i] = validate.Resolved{PkgName: path.Base(r.Path), Comparable: true}
	}
	return out, make([]error, len(refs))
}
