// Package jsonschema holds the JSON Schema of ordergen schema files
// (ordergen.schema.json, committed beside this file and printed by
// ordergen jsonschema), so that editors complete and check schemas as they
// are written. With the YAML language server, the first line of a schema
// names it:
//
//	# yaml-language-server: $schema=https://raw.githubusercontent.com/ordergen/ordergen/main/generator/jsonschema/ordergen.schema.json
//
// The JSON Schema (draft-07) describes the shape that package schema loads:
// every key, which values are mappings, lists, strings, numbers or
// booleans, the enumerations, identifier and duration patterns and the
// numeric ranges. What needs more than one value at a time (a branch's
// from: naming a declared state, the combinations that make no sense,
// whether a qualified type resolves) is left to ordergen check. Its
// identifier pattern is ASCII: the generator also accepts other Unicode
// upper-case letters.
//
// The package's tests check every valid schema of the repository against
// it with github.com/santhosh-tekuri/jsonschema (as an editor would), and
// its enumerations and policy keys against the generator's, whose policy
// values are the names of the runtime's own types.
package jsonschema
