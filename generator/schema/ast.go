package schema

import "github.com/ordergen/ordergen/generator/diag"

// Scalar is a scalar value with its position.
type Scalar struct {
	// Value is the text of the value.
	Value string
	// Tag is the YAML tag the value resolved to (!!str, !!int, !!float,
	// !!bool, !!null), or BadTag for a malformed value already reported.
	Tag string
	// Pos is where the value starts.
	Pos diag.Pos
}

// File is a whole schema. A nil field was not given.
type File struct {
	// Pos is the position of the document's top mapping.
	Pos diag.Pos
	// Version is the schema format version (version:).
	Version *Scalar
	// Package is the Go package name of the generated code (package:).
	Package *Scalar
	// Defaults are the policies every entity inherits (defaults:).
	Defaults *Policies
	// Entities are in declaration order.
	Entities []*Entity
	// EntitiesPos is the position of the entities: key; zero when absent.
	EntitiesPos diag.Pos
	// EntitiesBad is set when entities: is not a mapping (already reported).
	EntitiesBad bool
	// WireNames is the naming rule of the fields' wire names (go,
	// snake_case or camelCase), nil when absent.
	WireNames *Scalar
	// Out is the output folder, relative to the schema, nil when absent.
	Out *Scalar
	// Doc is the description of the whole schema (doc:), nil when absent.
	Doc *Scalar
	// Misspelt are the top-level keys the schema misspelt.
	Misspelt Misspelt
}

// Entity is one entry of entities:.
type Entity struct {
	// Name is the entity's name (the mapping key).
	Name Scalar
	// Key is the key: declaration, nil when absent.
	Key *KeyDecl
	// Version is the version: declaration, nil when absent.
	Version *VersionDecl
	// States are the ranked states, in order.
	States []Scalar
	// StatesPos is the position of the states: key; zero when absent.
	StatesPos diag.Pos
	// StatesBad is set when states: is not a list (already reported).
	StatesBad bool
	// StateDocs are the doc: of the ranked states that have one, by state
	// name (a state written as Name: {doc: ...}); branch states carry theirs
	// in Branch.Doc.
	StateDocs map[string]*Scalar
	// Branches are the branch states, in order.
	Branches []*Branch
	// Conflate is the conflate: value, nil when absent.
	Conflate *Scalar
	// OnGap is the on_gap: value (park or resync), nil when absent.
	OnGap *Scalar
	// Batch is the batch: declaration, nil when absent.
	Batch *BatchDecl
	// Notification is the notification: value, nil when absent.
	Notification *Scalar
	// Policies are the entity's overrides of the defaults.
	Policies Policies
	// Events are in declaration order.
	Events []*Event
	// EventsPos is the position of the events: key; zero when absent.
	EventsPos diag.Pos
	// EventsBad is set when events: is not a mapping (already reported).
	EventsBad bool
	// WireNames overrides the file's naming rule of wire names, nil when
	// absent.
	WireNames *Scalar
	// Brokers are the brokers that carry the entity's events (brokers:),
	// in order.
	Brokers []BrokerDecl
	// BrokersPos is the position of the brokers: key; zero when absent.
	BrokersPos diag.Pos
	// Doc is the entity's description (doc:), nil when absent.
	Doc *Scalar
	// Misspelt are the keys the entity misspelt.
	Misspelt Misspelt
}

// KeyDecl is an entity's key: {field, type}. Field and Type are nil when
// absent, and have the BadTag when malformed.
type KeyDecl struct {
	// Pos is the position of the key: key.
	Pos diag.Pos
	// Bad is set when the key is not a mapping (already reported).
	Bad bool
	// Field is the name of the key field.
	Field *Scalar
	// Type is the key's type.
	Type *Scalar
	// Wire is the key field's wire name, nil when absent.
	Wire *Scalar
	// Misspelt are the keys the declaration misspelt.
	Misspelt Misspelt
}

// VersionDecl is an entity's version: {field, type}. Type may be nil.
type VersionDecl struct {
	// Pos is the position of the version: key.
	Pos diag.Pos
	// Bad is set when the version is not a mapping (already reported).
	Bad bool
	// Field is the name of the version field.
	Field *Scalar
	// Type is the version's type, nil for the default.
	Type *Scalar
	// Wire is the version field's wire name, nil when absent.
	Wire *Scalar
	// Misspelt are the keys the declaration misspelt.
	Misspelt Misspelt
}

// BatchDecl is an entity's batch: {max_events, linger}. A field is nil when
// absent.
type BatchDecl struct {
	// Pos is the position of the batch: key.
	Pos diag.Pos
	// Bad is set when the value is not a mapping (already reported).
	Bad bool
	// MaxEvents is the most events of a key in one call.
	MaxEvents *Scalar
	// Linger is how long a batch waits for more events of its key.
	Linger *Scalar
}

// Branch is one entry of branches: a state entered only from the listed
// states.
type Branch struct {
	// Name is the branch state.
	Name Scalar
	// From are the states it may be entered from.
	From []Scalar
	// FromPos is the position of the from: list (or of the branch).
	FromPos diag.Pos
	// Doc is the branch state's description (doc:), nil when absent.
	Doc *Scalar
	// Misspelt are the keys the branch misspelt.
	Misspelt Misspelt
}

// Event is one entry of an entity's events:.
type Event struct {
	// Name is the event's name.
	Name Scalar
	// Fields are in declaration order.
	Fields []Field
	// Kind is snapshot or delta, nil when absent.
	Kind *Scalar
	// To is the state the event moves the entity to, nil when absent.
	To *Scalar
	// In are the states within which the event happens, without moving
	// the entity (in: [InTransit]), in order.
	In []Scalar
	// InPos is the position of the in: key; zero when absent.
	InPos diag.Pos
	// InBad is set when in: is not a list (already reported).
	InBad bool
	// Doc is the event's description (doc:), nil when absent.
	Doc *Scalar
}

// Field is one entry of an event's fields: a name and a type expression,
// written Name: type or Name: {type: type, wire: name, doc: text}.
type Field struct {
	// Name is the field's name.
	Name Scalar
	// Type is the field's type expression.
	Type Scalar
	// Wire is the field's wire name, nil when absent.
	Wire *Scalar
	// Doc is the field's description, nil when absent.
	Doc *Scalar
}

// Misspelt are the keys that a mapping of the schema misspelt, each with
// the position of its misspelling: a key is here when an unknown key of the
// mapping was reported with "did you mean KEY?" and KEY itself is absent.
// That report is the one error of the mistake: validation does not also
// report what follows from KEY's absence (a missing key, events moving to
// states the misspelt states: would have declared).
type Misspelt map[string]diag.Pos

// Has reports whether key was misspelt.
func (m Misspelt) Has(key string) bool {
	_, ok := m[key]
	return ok
}
