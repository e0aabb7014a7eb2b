package ir

// Package is a whole schema.
type Package struct {
	// Name is the Go package name of the generated code.
	Name string
	// Out is the output folder the schema names (out:), slash-separated
	// and relative to the schema's folder; "" for the default, the folder
	// named after the package.
	Out string
	// Entities are in declaration order.
	Entities []*Entity
	// Doc describes the schema (doc:), "" when it does not say: a sentence
	// for the generated package's comment and the catalogue.
	Doc string
}

// Entity is one entity and everything generated for it.
type Entity struct {
	// Name is the entity's name, the prefix of its generated names.
	Name string
	// Names are the names generated for it.
	Names Names
	// Key is the key field, shared by every event of the entity.
	Key Field
	// Version is the version field, nil when the entity has none.
	Version *Field
	// States are the ranked states, in rank order (lowest first).
	States []string
	// Branches are the non-ranked states with their entry rules.
	Branches []Branch
	// Conflate keeps only the newest pending event of a key (always for a
	// notification entity).
	Conflate bool
	// Resync says that a key whose resequencer bound is hit is resynced
	// from the source of truth (on_gap: resync) before it parks: the
	// handlers have the Resync method (Names.Resync).
	Resync bool
	// Batch says that the handlers take a key's pending events in batches
	// (batch:), up to Policy.BatchSize at once after waiting up to
	// Policy.Linger: one method (Names.HandleBatch) instead of one per
	// event.
	Batch bool
	// Notification says that the events only notify that their key changed
	// (notification: true): they carry the key alone, a key's pending ones
	// are conflated into one call of Names.HandleChanged, and there is no
	// version or state.
	Notification bool
	// Policy is the delivery policy, defaults applied.
	Policy Policy
	// Events are in declaration order.
	Events []*Event
	// Brokers are the brokers that carry the events (brokers:), in the
	// schema's order; none when it names none.
	Brokers []Broker
	// Doc describes the entity (doc:), "" when the schema does not say.
	Doc string
	// StateDocs describe the states (ranked and branch) whose doc: the
	// schema gives, by state name.
	StateDocs map[string]string
}

// HasStateGuard reports whether any event of e moves it to a state or
// happens only within states: the guards then read its state.
func (e *Entity) HasStateGuard() bool {
	for _, ev := range e.Events {
		if ev.To != "" || len(ev.In) > 0 {
			return true
		}
	}
	return false
}

// HasWithin reports whether any event of e happens only within states
// (in:).
func (e *Entity) HasWithin() bool {
	for _, ev := range e.Events {
		if len(ev.In) > 0 {
			return true
		}
	}
	return false
}

// PerEvent reports whether e's handlers have one method per event: the
// entity neither batches nor notifies.
func (e *Entity) PerEvent() bool { return !e.Batch && !e.Notification }

// HasSnapshot reports whether any event of e is a snapshot.
func (e *Entity) HasSnapshot() bool {
	for _, ev := range e.Events {
		if ev.Snapshot {
			return true
		}
	}
	return false
}

// Branch is a state entered only from the states in From.
type Branch struct {
	// Name is the branch state.
	Name string
	// From are the states (ranked or branch) it may be entered from.
	From []string
}

// IsBranch reports whether state is a branch of e.
func (e *Entity) IsBranch(state string) (Branch, bool) {
	for _, b := range e.Branches {
		if b.Name == state {
			return b, true
		}
	}
	return Branch{}, false
}

// StateNames returns the ranked states, then the branch states.
func (e *Entity) StateNames() []string {
	names := append([]string(nil), e.States...)
	for _, b := range e.Branches {
		names = append(names, b.Name)
	}
	return names
}

// Rank returns the rank of a ranked state (1 for the first), or 0.
func (e *Entity) Rank(state string) int {
	for i, s := range e.States {
		if s == state {
			return i + 1
		}
	}
	return 0
}

// Event is one event of an entity.
type Event struct {
	// Name is the event's name, also its struct's name.
	Name string
	// Handle is the name of the handlers' method for it (HandleDeposited).
	Handle string
	// Publish is the name of the publishers' method for it
	// (PublishDeposited).
	Publish string
	// PublishTx is the name of the outbox's method for it, which writes
	// it in the caller's transaction (PublishDepositedTx).
	PublishTx string
	// Fields are the event's own fields in declaration order (the key and
	// version fields are not among them).
	Fields []Field
	// Snapshot marks an event that carries the entity's full state: it is
	// applied across a version gap.
	Snapshot bool
	// To is the state the event moves the entity to, "" for none.
	To string
	// In are the states (ranked or branch) within which the event happens,
	// without moving the entity (in:): the state guard skips it in any
	// other state. Nil for an event that applies in every state; never
	// set together with To.
	In []string
	// Doc describes the event (doc:), "" when the schema does not say.
	Doc string
}

// Field is a named, typed struct field.
type Field struct {
	// Name is the field's name.
	Name string
	// Type is the field's type.
	Type *Type
	// Wire is the field's name in encoded events (the JSON codec's), as the
	// schema sets it or its naming rule makes it; the Go name by default.
	Wire string
	// Doc describes the field (doc:), "" when the schema does not say.
	Doc string
}

// TypeKind tells the form of a Type.
type TypeKind uint8

const (
	// Builtin is a predeclared type: Name holds it.
	Builtin TypeKind = iota
	// Named is a type from another package: Path, PkgName and Name.
	Named
	// Slice is []Elem.
	Slice
	// Map is map[Key]Elem.
	Map
	// Pointer is *Elem.
	Pointer
)

// Type is a resolved field type.
type Type struct {
	// Kind tells which of the other fields are set.
	Kind TypeKind
	// Name is the builtin's or the named type's name.
	Name string
	// Path is the import path of a named type.
	Path string
	// PkgName is the package name of a named type.
	PkgName string
	// Key is a map's key type.
	Key *Type
	// Elem is the element type of a slice, map or pointer.
	Elem *Type
}

// String returns the type as written in Go.
func (t *Type) String() string {
	return t.spell(func(n *Type) string { return n.PkgName })
}

// Schema returns the type as a schema spells it: qualified types by their
// import path.
func (t *Type) Schema() string {
	return t.spell(func(n *Type) string { return n.Path })
}

// spell writes the type in Go syntax, qualifying a named type with what
// qual returns for it.
func (t *Type) spell(qual func(*Type) string) string {
	switch t.Kind {
	case Named:
		return qual(t) + "." + t.Name
	case Slice:
		return "[]" + t.Elem.spell(qual)
	case Map:
		return "map[" + t.Key.spell(qual) + "]" + t.Elem.spell(qual)
	case Pointer:
		return "*" + t.Elem.spell(qual)
	}
	return t.Name
}

// NewEvent returns the event named name, with the names generated for it.
func NewEvent(name string) *Event {
	return &Event{Name: name, Handle: "Handle" + name, Publish: "Publish" + name, PublishTx: "Publish" + name + "Tx"}
}
