package breaking

// Rule is a kind of breaking change.
type Rule struct {
	// ID names the rule, as printed before each change it finds.
	ID string
	// Purpose says, in one sentence, what the rule protects.
	Purpose string
}

// Rule IDs.
const (
	EntityNoDelete     = "ENTITY_NO_DELETE"
	EventNoDelete      = "EVENT_NO_DELETE"
	KeyFieldSame       = "KEY_FIELD_SAME"
	KeyTypeSame        = "KEY_TYPE_SAME"
	VersionFieldSame   = "VERSION_FIELD_SAME"
	VersionTypeSame    = "VERSION_TYPE_SAME"
	StateNoDelete      = "STATE_NO_DELETE"
	StateOrderSame     = "STATE_ORDER_SAME"
	BranchFromNoDelete = "BRANCH_FROM_NO_DELETE"
	EventKindSame      = "EVENT_KIND_SAME"
	EventStateSame     = "EVENT_STATE_SAME"
	EventInNoNarrow    = "EVENT_IN_NO_NARROW"
	FieldNoDelete      = "FIELD_NO_DELETE"
	FieldSameType      = "FIELD_SAME_TYPE"
	WireNameSame       = "WIRE_NAME_SAME"
	ConflateNotEnabled = "CONFLATE_NOT_ENABLED"
	NotificationSame   = "NOTIFICATION_SAME"
	BrokerAddressSame  = "BROKER_ADDRESS_SAME"
)

// Rules returns every rule, in the order Compare applies them.
func Rules() []Rule {
	return []Rule{
		{EntityNoDelete, "An entity is not removed: its producers would have no consumer and its stored versions, states and parked events no owner."},
		{KeyFieldSame, "An entity's key field keeps its name: the key routes each event to its lane and identifies every stored record."},
		{KeyTypeSame, "An entity's key keeps its type: stored versions, states and parked events are keyed by its values."},
		{VersionFieldSame, "An entity keeps its version field, neither renamed, added nor removed: producers set it and the version guard's stored versions continue it."},
		{VersionTypeSame, "An entity's version keeps its type: encoded events and stored versions carry its values."},
		{StateNoDelete, "A state is not removed, and a ranked state stays ranked and a branch state a branch: stores may hold entities in it."},
		{StateOrderSame, "Ranked states keep their order and ranks: a new ranked state goes after the last one, so that stored states keep their ranks."},
		{BranchFromNoDelete, "A branch state stays enterable from every state its from: listed: events in flight expect those transitions."},
		{ConflateNotEnabled, "Conflation is not turned on for an existing entity: it drops pending events that consumers of the older schema handle."},
		{NotificationSame, "An entity neither becomes nor stops being notifications: a notification carries only its key and is coalesced with the key's others, so producers, handlers and parked events of the two kinds do not understand each other."},
		{EventNoDelete, "An event is not removed from its entity: producers of the older schema still publish it and park stores may hold it."},
		{EventKindSame, "An event keeps its kind: a delta turned snapshot is applied across gaps it cannot fill, a snapshot turned delta waits for gaps it used to cross."},
		{EventStateSame, "An event keeps the state it moves its entity to (or none): the state guard's decisions and stored states depend on it."},
		{EventInNoNarrow, "An event's in: is not added or narrowed: the state guard would skip the event in states where consumers of the older schema apply it (widening it, or removing it, is compatible)."},
		{FieldNoDelete, "A field is not removed from an event: producers of the older schema still send it and consumers read it."},
		{FieldSameType, "A field keeps its type: events in flight and parked events encoded with the older type must still decode."},
		{WireNameSame, "A field, key or version keeps its wire name (its own wire: or the wire_names rule): events in flight and parked events encoded under the older name would decode without its value."},
		{BrokerAddressSame, "An entity keeps every broker its brokers: names, and the topic, exchange or queue there: consumers of the older schema read there, and would never see events published elsewhere."},
	}
}
