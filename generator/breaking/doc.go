// Package breaking finds the changes between two versions of a schema that
// break the consumers of its events or the data they stored: events in
// flight, versions and states in stores, parked events, and the code of
// services generated from the older version. Each rule has an ID in the
// style of buf's breaking rules (ENTITY_NO_DELETE, FIELD_SAME_TYPE...) and
// a one-sentence purpose; Rules lists them.
//
// Adding entities, events and fields, appending a ranked state after the
// last one, adding a branch state, widening a branch's from: or an event's
// in: (or removing its in:), turning conflation off, changing delivery
// policies and naming another broker in brokers: are compatible.
//
// Both versions must be valid schemas; their qualified field types are
// compared as written (import path and name), without loading packages, so
// that a schema can be compared with an older one whose types have moved.
package breaking
