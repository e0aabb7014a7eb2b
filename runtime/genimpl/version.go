package genimpl

// The version handshake between generated code and this package, in
// protobuf-go's way: each generated package states the version of this
// package it needs (the generator's GenVersion when it wrote it), and this
// package states the oldest and newest it runs (MinVersion, MaxVersion).
// The generated code's two constants
//
//	const (
//		_ = genimpl.MaxVersion - 5 // 5: the version it needs
//		_ = 5 - genimpl.MinVersion
//	)
//
// do not compile when it needs a newer version than MaxVersion, or an
// older one than MinVersion: the difference is a negative constant of an
// unsigned type, and the compiler's message names the type, which says
// what to do, and the versions:
//
//	genimpl.MaxVersion - 9 (constant -1 of uint type
//	genimpl.UpgradeOrdergenToRunCodeGeneratedAboveVersion8) overflows uint
//
// means the github.com/ordergen/ordergen module in go.mod is older than
// the ordergen that generated the code: upgrade it (go get
// github.com/ordergen/ordergen@latest), or generate with the module's own
// ordergen (go tool ordergen). The other,
//
//	7 - genimpl.MinVersion (constant -1 of uint type
//	genimpl.RegenerateCodeGeneratedBelowVersion8) overflows uint
//
// means the code is older than this package still runs: regenerate it
// with the module's ordergen (go generate ./...).
//
// CONTRIBUTING.md says when to bump: GenVersion (and MaxVersion with it)
// when generated code starts to need something new of this package or the
// runtime; MinVersion when this package stops running code of an older
// version. The types' names carry the versions, so a bump renames them (a
// test checks that they agree).

// GenVersion is the version the generator of this module writes into the
// code it generates: the version that code needs.
const GenVersion = 8

// UpgradeOrdergenToRunCodeGeneratedAboveVersion8 is MaxVersion's type: its
// name is what the compiler's message says when generated code needs a
// newer version than this package runs.
type UpgradeOrdergenToRunCodeGeneratedAboveVersion8 uint

// RegenerateCodeGeneratedBelowVersion8 is MinVersion's type: its name is
// what the compiler's message says when generated code is older than this
// package runs.
type RegenerateCodeGeneratedBelowVersion8 uint

const (
	// MaxVersion is the newest version of generated code this package
	// runs: always GenVersion, the generator's own.
	MaxVersion UpgradeOrdergenToRunCodeGeneratedAboveVersion8 = GenVersion
	// MinVersion is the oldest version of generated code this package
	// runs.
	MinVersion RegenerateCodeGeneratedBelowVersion8 = 8
)

// The package's own code is of GenVersion, which it must run:
// MinVersion <= GenVersion.
const _ = GenVersion - MinVersion
