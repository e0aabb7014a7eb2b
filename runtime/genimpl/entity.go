package genimpl

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// Event is what every generated event interface has (AccountEvent): the
// event's name in the schema and its key.
type Event[K comparable] interface {
	EventName() string
	EventKey() K
}

// Entity describes one entity of a schema, as the generated code declares
// it once (accountEntity): everything the generic wiring needs to know of
// it besides its types. It is read only.
type Entity[K comparable, E Event[K], B any] struct {
	// Package is the generated package's name, the prefix of its errors.
	Package string
	// Name is the entity's name (Account).
	Name string
	// KeyField is the name of the key field of its events (AccountID).
	KeyField string
	// VersionField is the name of their version field, "" without one.
	VersionField string
	// Version returns an event's version (the event interface's
	// EventVersion); nil without a version. SignedVersion says that the
	// version field is of a signed type, whose negative values Version
	// returns above math.MaxInt64.
	Version       func(E) uint64
	SignedVersion bool
	// States are the ranked states, lowest first; Branches the others.
	States   []string
	Branches []Branch
	// Events are the entity's events, in the schema's order.
	Events []EventRule[E]
	// Conflate keeps a key's newest pending event only; Batch hands a
	// key's pending events to the handler in one call; Notification calls
	// the handler with the key alone (and conflates); Resync brings a key
	// whose resequencer bound is hit up to date from the source of truth
	// (on_gap: resync); Group commits transactional subscribers' work in
	// groups (group:).
	Conflate, Batch, Notification, Resync, Group bool
	// Defaults are the schema's policies, the Config a subscriber starts
	// from.
	Defaults Config[K, E]
	// Wrap returns a body that holds ev, and ev's kind (its index in
	// Events), or -1 for a kind the generic code finds: a pointer to an
	// event, or no event of the entity; nil for an entity whose events
	// travel boxed (Box). Bodies pass by value, so that a body never
	// escapes to the heap through them.
	Wrap func(ev E) (B, int)
	// Box returns the body of ev, of kind and version, for an entity whose
	// events travel boxed (genimpl.Box); nil otherwise.
	Box func(ev E, kind int, version uint64) B
	// Unwrap returns the event of kind that b holds (UnwrapBoxed for
	// boxed events).
	Unwrap func(kind int, b B) E
	// Kind returns the kind of the event b holds; nil for an entity of one
	// event, whose kind is 0. BodyVersion returns its version (as Version
	// does); nil without a version. The engines carry the body alone (see
	// env.go), so these read the kind and the version from it.
	// They take the body by value: a pointer into an engine's memory,
	// passed to a function value, would make every body escape to the
	// heap.
	Kind        func(b B) int
	BodyVersion func(b B) uint64

	// kinds makes, once, the tables of kind: the events' types
	// (types[i] is Events[i]'s), pointers to them, and, for a large
	// entity, a map of both to their index.
	kinds     sync.Once
	types     []reflect.Type
	pointers  []reflect.Type
	typeIndex map[reflect.Type]int
}

// Branch is a state entered only from the states it lists.
type Branch struct {
	Name string
	From []string
}

// EventRule is what the guards, the codec and the publishers know of one
// event of an entity.
type EventRule[E any] struct {
	// Name is the event's name (and its struct's).
	Name string
	// Snapshot marks an event that carries the full state: applied across
	// a version gap.
	Snapshot bool
	// To is the state the event moves its entity to, "" for none.
	To string
	// In are the states within which the event happens, without moving
	// its entity (in:); nil when it applies in any.
	In []string
	// Type is the event's Go type (Of gives it).
	Type EventType[E]
}

// EventType is what the generic code knows of an event's Go type: the
// type, and how to decode it from JSON.
type EventType[E any] struct {
	t      reflect.Type
	decode func([]byte) (E, error)
}

// Of returns the EventType of events of type T, which must implement E.
func Of[T any, E any]() EventType[E] {
	return EventType[E]{t: reflect.TypeFor[T](), decode: decodeJSON[T, E]}
}

// decodeJSON decodes an event of type T from its JSON encoding.
func decodeJSON[T any, E any](data []byte) (E, error) {
	var t T
	if err := json.Unmarshal(data, &t); err != nil {
		var zero E
		return zero, err
	}
	e, ok := any(t).(E)
	if !ok {
		var zero E
		return zero, fmt.Errorf("genimpl: %T is not an event of the entity", t)
	}
	return e, nil
}

// Handler is a subscriber's handler as the generic guards call it: the
// generated code adapts the entity's typed handler interface to it (its
// Handle methods in Call, HandleBatch in Batch, its Resync method).
type Handler[K comparable, E any, B any] struct {
	// Call calls the handler's method for the event v carries (of key).
	Call func(ctx context.Context, key K, v B) error
	// Batch calls the batch handler (entities with batch:).
	Batch func(ctx context.Context, key K, events []E) error
	// Resync asks the handler for key's version and state at the source of
	// truth (on_gap: resync).
	Resync func(ctx context.Context, key K) (version uint64, state string, err error)
}

// TxHandler is Handler for a transactional handler, which writes in the
// transaction of the subscriber's store.
type TxHandler[K comparable, E any, B any] struct {
	Call   func(ctx context.Context, tx *sql.Tx, key K, v B) error
	Batch  func(ctx context.Context, tx *sql.Tx, key K, events []E) error
	Resync func(ctx context.Context, tx *sql.Tx, key K) (version uint64, state string, err error)
}

// Adapt returns adapted, a generated handler's methods as a Handler or a
// TxHandler, or nil when h, the generated handler they call, is nil: so
// that New and Subscribe refuse a nil handler instead of calling it.
func Adapt[H any, T any](h H, adapted *T) *T {
	if any(h) == nil {
		return nil
	}
	return adapted
}

// ErrUnknownEvent is what a generated Call returns for an event of no type
// of its entity; the guards refuse such an event before they call it.
var ErrUnknownEvent = errors.New("ordergen: unknown event")

// prefix returns the start of an error about key: "ledger: Account k: ".
func (en *Entity[K, E, B]) prefix(key K) string {
	return fmt.Sprintf("%s: %s %v: ", en.Package, en.Name, key)
}

// errorf returns an error about key, its text after the entity's prefix.
func (en *Entity[K, E, B]) errorf(key K, format string, args ...any) error {
	return fmt.Errorf(en.prefix(key)+format, args...)
}

// tableAt is the number of events from which kind looks an event's type
// up in a map; below it, a scan of the types is cheaper than hashing.
const tableAt = 8

// kind returns the index in Events of ev's type (of its value or a pointer
// to it), and -1 for any other type (a nil event).
func (en *Entity[K, E, B]) kind(ev E) int {
	en.kinds.Do(en.indexTypes)
	t := reflect.TypeOf(ev)
	if en.typeIndex != nil {
		if i, ok := en.typeIndex[t]; ok {
			return i
		}
		return -1
	}
	for i, et := range en.types {
		if et == t {
			return i
		}
	}
	for i, pt := range en.pointers {
		if pt == t {
			return i
		}
	}
	return -1
}

// indexTypes makes the tables of kind.
func (en *Entity[K, E, B]) indexTypes() {
	for _, r := range en.Events {
		en.types = append(en.types, r.Type.t)
		en.pointers = append(en.pointers, reflect.PointerTo(r.Type.t))
	}
	if len(en.Events) >= tableAt {
		en.typeIndex = make(map[reflect.Type]int, 2*len(en.Events))
		for i := range en.Events {
			en.typeIndex[en.types[i]] = i
			en.typeIndex[en.pointers[i]] = i
		}
	}
}

// value returns ev as a value of its event type, dereferencing a pointer,
// and its kind; false for a nil event or a nil pointer or a type not of
// the entity. The reflection runs only for a pointer, which publishers
// seldom pass.
func (en *Entity[K, E, B]) value(ev E) (E, int, bool) {
	i := en.kind(ev)
	if i < 0 {
		return ev, i, false
	}
	if reflect.TypeOf(ev) == en.types[i] {
		return ev, i, true
	}
	v := reflect.ValueOf(ev)
	if v.IsNil() {
		return ev, -1, false
	}
	out, ok := v.Elem().Interface().(E)
	return out, i, ok
}

// versioned reports whether the entity's events have a version.
func (en *Entity[K, E, B]) versioned() bool { return en.Version != nil }

// stated reports whether any of its events moves it to a state or happens
// within states: its guards read the state.
func (en *Entity[K, E, B]) stated() bool {
	for i := range en.Events {
		if en.Events[i].To != "" || len(en.Events[i].In) > 0 {
			return true
		}
	}
	return false
}

// guarded reports whether its subscribers have guards, whose skips they
// tell OnSkip.
func (en *Entity[K, E, B]) guarded() bool { return en.versioned() || en.stated() }

// check refuses, with an error wrapping runtime.ErrInvalidEvent, what the
// publishers refuse: a nil event, an empty key (of a string key type: an
// integer key of 0 is a key), a version below 1. It returns the event as a
// value. textKey is stringKey[K]().
func (en *Entity[K, E, B]) check(e E, textKey bool) (E, error) {
	ev, kind, ok := en.value(e)
	if !ok {
		return ev, en.nilEvent()
	}
	var version uint64
	if en.Version != nil {
		version = en.Version(ev)
	}
	return ev, en.refuse(kind, ev.EventKey(), version, textKey)
}

// nilEvent is the refusal of a nil event, or of one of no type of the
// entity.
func (en *Entity[K, E, B]) nilEvent() error {
	return fmt.Errorf("%w: nil %s event", runtime.ErrInvalidEvent, en.Name)
}

// refuse returns the refusal of an event of kind with key and version (0
// without one): an empty key of a string key type (textKey), a version
// below 1; nil for neither.
func (en *Entity[K, E, B]) refuse(kind int, key K, version uint64, textKey bool) error {
	var zero K
	if textKey && key == zero {
		return fmt.Errorf("%w: %s event %s: key field %s is empty", runtime.ErrInvalidEvent, en.Name, en.Events[kind].Name, en.KeyField)
	}
	if en.Version != nil && (version == 0 || en.SignedVersion && version > math.MaxInt64) {
		return fmt.Errorf("%w: %s event %s: version field %s is %d, below 1", runtime.ErrInvalidEvent, en.Name, en.Events[kind].Name, en.VersionField, en.signed(version))
	}
	return nil
}

// signed returns v, a version, as the field holds it: negative for a
// signed field's negative value.
func (en *Entity[K, E, B]) signed(v uint64) any {
	if en.SignedVersion {
		return int64(v)
	}
	return v
}

// stringKey reports whether K is a string type, whose empty value is no
// key.
func stringKey[K comparable]() bool { return reflect.TypeFor[K]().Kind() == reflect.String }

// keyText returns key's text form, as durable.EncodeKey gives it, the
// name of a key in a durable store.
func keyText[K comparable](key K) string {
	switch k := any(key).(type) {
	case string:
		return k
	case int64:
		return strconv.FormatInt(k, 10)
	case int:
		return strconv.Itoa(k)
	case uint64:
		return strconv.FormatUint(k, 10)
	}
	s, err := durable.EncodeKey(key)
	if err != nil {
		return fmt.Sprint(key) // the validator allows strings and integers only
	}
	return s
}

// list joins items as "A, B or C".
func list(items []string, conj string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + conj + " " + items[len(items)-1]
}
