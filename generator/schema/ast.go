package schema

import "github.com/ordergen/ordergen/generator/diag"

// Scalar is a scalar value with its position. Tag is the YAML tag the value
// resolved to (!!str, !!int, !!float, !!bool, !!null).
type Scalar struct {
	Value string
	Tag   string
	Pos   diag.Pos
}

// File is a whole schema.
type File struct {
	// Pos is the position of the document's top mapping.
	Pos      diag.Pos
	Version  *Scalar
	Package  *Scalar
	Defaults *Policies
	// Entities are in declaration order.
	Entities []*Entity
	// EntitiesBad is set when entities: is not a mapping (already reported).
	EntitiesBad bool
}

// Policies are the delivery settings shared by defaults and entities. A nil
// field was not given.
type Policies struct {
	Delivery    *Scalar
	Retry       *Retry
	Timeout     *Scalar
	OnExhausted *Scalar
	Backlog     *Backlog
	Lanes       *Lanes
	Resequencer *Resequencer
}

// Retry is a retry: mapping.
type Retry struct {
	Pos        diag.Pos
	Attempts   *Scalar
	Initial    *Scalar
	Max        *Scalar
	Multiplier *Scalar
	Jitter     *Scalar
}

// Backlog is a backlog: mapping.
type Backlog struct {
	Pos      diag.Pos
	PerKey   *Scalar
	Total    *Scalar
	WhenFull *Scalar
	Wait     *Scalar
}

// Lanes is a lanes: mapping.
type Lanes struct {
	Pos       diag.Pos
	MaxActive *Scalar
}

// Resequencer is a resequencer: mapping (bounds for delta events held back
// on a version gap).
type Resequencer struct {
	Pos       diag.Pos
	MaxEvents *Scalar
	MaxWait   *Scalar
}

// Entity is one entry of entities:.
type Entity struct {
	Name    Scalar
	Key     *KeyDecl
	Version *VersionDecl
	States  []Scalar
	// StatesPos is the position of the states: value; zero when absent.
	StatesPos diag.Pos
	Branches  []*Branch
	Conflate  *Scalar
	Policies  Policies
	Events    []*Event
	// EventsPos is the position of the events: key; zero when absent.
	EventsPos diag.Pos
	// EventsBad is set when events: is not a mapping (already reported).
	EventsBad bool
}

// KeyDecl is an entity's key: {field, type}. Field and Type are nil when
// absent, and have the BadTag when malformed.
type KeyDecl struct {
	Pos diag.Pos
	// Bad is set when the key is not a mapping (already reported).
	Bad   bool
	Field *Scalar
	Type  *Scalar
}

// VersionDecl is an entity's version: {field, type}. Type may be nil.
type VersionDecl struct {
	Pos diag.Pos
	// Bad is set when the version is not a mapping (already reported).
	Bad   bool
	Field *Scalar
	Type  *Scalar
}

// Branch is one entry of branches: a state entered only from the listed
// states.
type Branch struct {
	Name    Scalar
	From    []Scalar
	FromPos diag.Pos
}

// Event is one entry of an entity's events:.
type Event struct {
	Name   Scalar
	Fields []Field
	Kind   *Scalar
	To     *Scalar
}

// Field is one entry of an event's fields: a name and a type expression.
type Field struct {
	Name Scalar
	Type Scalar
}
