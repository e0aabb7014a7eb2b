// Package diag holds the positioned diagnostics that every stage of the
// ordergen generator reports: a line and column in the schema and a message.
// A List collects them all, so that one run reports every mistake in a
// schema, sorted by position, as path:line:col: message.
package diag
