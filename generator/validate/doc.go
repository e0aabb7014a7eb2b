// Package validate checks a loaded schema (package schema) and turns it
// into the resolved model of package ir.
//
// Check reports every problem it finds, each at the position of the
// schema text it is about, and builds the ir.Package only when there is
// none. The rules are listed in the documentation of package generator.
//
// Qualified field types (import/path.Type) are looked up through a
// Resolver, so that tests of everything else need no go command;
// PackagesResolver is the real one, built on golang.org/x/tools/go/packages.
package validate
