// Package schema loads an ordergen schema file into a syntax tree that keeps
// the declaration order and the line and column of every key and value.
//
// Loading is strict: a key that the schema format does not define is an
// error, and so is a key given twice in one mapping. Loading checks only the
// shape of the document (which keys, mappings, lists and scalars go where);
// the meaning (identifiers, types, durations, policies, states and their
// combinations) is checked by package validate. Every problem is collected
// in a diag.List; Load never stops at the first one and never panics.
//
// YAML anchors and aliases are refused: a schema is short, and aliases
// would let a small file expand into a huge one.
package schema
