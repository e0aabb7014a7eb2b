package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/ordergen/ordergen/generator/diag"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// A namespace or key that the store does not know is an error that names
// the closest known one, as the generator does for a schema: a mistyped
// name must not look like "nothing parked".

// suggest returns " (did you mean X?)" for the candidate closest to word
// (case is ignored), or "".
func suggest(word string, candidates []string) string {
	if m := diag.Closest(word, candidates); m != "" {
		return " (did you mean " + visible(m) + "?)"
	}
	return ""
}

// checkNamespace returns an error unless the store holds something in
// namespace.
func checkNamespace(ctx context.Context, s *sqlstore.Store, namespace string) error {
	known, err := s.Namespaces(ctx)
	if err != nil {
		return err
	}
	return checkKnown(namespace, known, "namespace %s holds nothing in this store%s",
		"no subscriber has versions, states or parked keys in this store", "namespaces")
}

// checkKnown returns nil when name is one of known, or else the error of
// format (the quoted name, then a hint): the closest known name, none (when
// nothing is known), or the list of known ones, called what.
func checkKnown(name string, known []string, format, none, what string) error {
	if slices.Contains(known, name) {
		return nil
	}
	hint := suggest(name, known)
	switch {
	case hint != "":
	case len(known) == 0:
		hint = " (" + none + ")"
	default:
		hint = " (" + what + ": " + visibleList(known) + ")"
	}
	return fmt.Errorf(format, quote(name), hint)
}

// parkedKey returns the parked events of key in namespace, or an error
// naming the closest parked key when key is not parked there.
func parkedKey(ctx context.Context, s *sqlstore.Store, namespace, key string) ([]runtime.ParkedEvent[durable.RawEvent], error) {
	if err := checkNamespace(ctx, s, namespace); err != nil {
		return nil, err
	}
	events, err := runtime.ReadPark(ctx, s.Parks(namespace), key)
	if err != nil || len(events) > 0 {
		return events, err
	}
	keys, err := s.Parks(namespace).Keys(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Key
	}
	hint := suggest(key, names)
	switch {
	case hint != "":
	case len(names) == 0:
		hint = " (nothing is parked there)"
	default:
		hint = fmt.Sprintf(" (%d keys are parked there: ordergen-parked list %s)", len(names), quote(namespace))
	}
	return nil, fmt.Errorf("key %s is not parked in %s%s", quote(key), visible(namespace), hint)
}
