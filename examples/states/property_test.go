package states

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/ordergen/ordergen/examples/states/shipping"
)

// shipmentModel is the rule for a Shipment (with a version), delivered in
// order: it returns whether ev applies in state s, and the state after it.
func shipmentModel(s shipping.ShipmentState, ev shipping.ShipmentEvent) (bool, shipping.ShipmentState) {
	rank := map[shipping.ShipmentState]int{"": 0, shipping.ShipmentStateBooked: 1, shipping.ShipmentStateInTransit: 2,
		shipping.ShipmentStateOutForDelivery: 3, shipping.ShipmentStateDelivered: 4}
	move := func(to shipping.ShipmentState) (bool, shipping.ShipmentState) {
		if s == shipping.ShipmentStateReturned || rank[to] < rank[s] {
			return false, s
		}
		return true, to // the current state too: the version says it is newer
	}
	switch ev.(type) {
	case shipping.ShipmentBooked:
		return move(shipping.ShipmentStateBooked)
	case shipping.ShipmentScanned:
		return move(shipping.ShipmentStateInTransit)
	case shipping.ShipmentOutForDelivery:
		return move(shipping.ShipmentStateOutForDelivery)
	case shipping.ShipmentDelivered:
		return move(shipping.ShipmentStateDelivered)
	case shipping.ShipmentReturned:
		switch s {
		case shipping.ShipmentStateInTransit, shipping.ShipmentStateOutForDelivery, shipping.ShipmentStateReturned:
			return true, shipping.ShipmentStateReturned
		}
		return false, s
	case shipping.ShipmentLocated:
		return s == shipping.ShipmentStateInTransit || s == shipping.ShipmentStateOutForDelivery, s
	}
	panic(fmt.Sprintf("no model for %T", ev))
}

// parcelModel is the rule for a Parcel (without a version).
func parcelModel(s shipping.ParcelState, ev shipping.ParcelEvent) (bool, shipping.ParcelState) {
	rank := map[shipping.ParcelState]int{"": 0, shipping.ParcelStateBooked: 1, shipping.ParcelStateInTransit: 2, shipping.ParcelStateDelivered: 3}
	move := func(to shipping.ParcelState) (bool, shipping.ParcelState) {
		if rank[to] <= rank[s] {
			return false, s // late, or a duplicate
		}
		return true, to
	}
	switch ev.(type) {
	case shipping.ParcelBooked:
		return move(shipping.ParcelStateBooked)
	case shipping.ParcelScanned:
		return move(shipping.ParcelStateInTransit)
	case shipping.ParcelDelivered:
		return move(shipping.ParcelStateDelivered)
	case shipping.ParcelLocated:
		return s == shipping.ParcelStateInTransit, s
	}
	panic(fmt.Sprintf("no model for %T", ev))
}

// Random streams of a shipment's and a parcel's events, delivered in
// order, through the in-memory guards and a store's transactions: what
// the guards apply, skip and store is what the rules say. Each draw is a
// key of its own on dispatchers that live for the whole check.
func TestGuardsFollowTheRules(t *testing.T) {
	for _, st := range stores(t) {
		if st.sql != nil && !st.tx {
			continue // the same guards as memory's, over the store's: the rules tests cover them
		}
		t.Run(st.name, func(t *testing.T) {
			ships, parcels := startShipments(t, st), startParcels(t, st)
			var n atomic.Int64
			rapid.Check(t, func(rt *rapid.T) {
				key := fmt.Sprintf("k-%d", n.Add(1))
				kinds := rapid.SliceOfN(rapid.IntRange(0, 5), 1, 12).Draw(rt, "shipment")
				var events []shipping.ShipmentEvent
				var want []string
				var state shipping.ShipmentState
				for i, k := range kinds {
					v := uint64(i + 1)
					ev := []shipping.ShipmentEvent{
						shipping.ShipmentBooked{ShipmentID: key, Version: v},
						shipping.ShipmentScanned{ShipmentID: key, Version: v, Location: fmt.Sprint(i)},
						shipping.ShipmentLocated{ShipmentID: key, Version: v, Location: fmt.Sprint(i)},
						shipping.ShipmentOutForDelivery{ShipmentID: key, Version: v},
						shipping.ShipmentDelivered{ShipmentID: key, Version: v},
						shipping.ShipmentReturned{ShipmentID: key, Version: v}, // unimplemented: applied, not handled
					}[k]
					var applies bool
					applies, state = shipmentModel(state, ev)
					if _, returned := ev.(shipping.ShipmentReturned); applies && !returned {
						want = append(want, record(ev))
					}
					events = append(events, ev)
				}
				publish(t, ships.d, events...)
				got, err := ships.applied(t.Context(), shipmentKey(key))
				if err != nil {
					rt.Fatal(err)
				}
				if !slices.Equal(got, want) {
					rt.Fatalf("%s applied %q, the rules %q", key, got, want)
				}
				s, err := ships.d.State(t.Context(), shipping.ShipmentFirstSubscriber, key)
				v, verr := ships.d.Version(t.Context(), shipping.ShipmentFirstSubscriber, key)
				if err != nil || verr != nil || s != state || v != uint64(len(events)) {
					rt.Fatalf("%s: state %q, version %d (%v, %v); the rules %q, %d", key, s, v, err, verr, state, len(events))
				}

				kinds = rapid.SliceOfN(rapid.IntRange(0, 3), 1, 12).Draw(rt, "parcel")
				var pevents []shipping.ParcelEvent
				want = nil
				var pstate shipping.ParcelState
				for i, k := range kinds {
					ev := []shipping.ParcelEvent{
						shipping.ParcelBooked{ParcelID: key},
						shipping.ParcelScanned{ParcelID: key, Location: fmt.Sprint(i)},
						shipping.ParcelLocated{ParcelID: key, Location: fmt.Sprint(i)},
						shipping.ParcelDelivered{ParcelID: key},
					}[k]
					var applies bool
					if applies, pstate = parcelModel(pstate, ev); applies {
						want = append(want, record(ev))
					}
					pevents = append(pevents, ev)
				}
				publish(t, parcels.d, pevents...)
				if got, err = parcels.applied(t.Context(), parcelKey(key)); err != nil || !slices.Equal(got, want) {
					rt.Fatalf("%s applied %q (%v), the rules %q", key, got, err, want)
				}
				if ps, err := parcels.d.State(t.Context(), shipping.ParcelFirstSubscriber, key); err != nil || ps != pstate {
					rt.Fatalf("%s: state %q, %v; the rules %q", key, ps, err, pstate)
				}
			})
			// Every event the guards did not apply was told to OnSkip.
			for _, r := range []struct {
				name  string
				stats uint64
				told  int
			}{
				{"Shipment", ships.d.Stats()[shipping.ShipmentFirstSubscriber].Skipped - ships.d.Stats()[shipping.ShipmentFirstSubscriber].Unimplemented, len(ships.skips.all())},
				{"Parcel", parcels.d.Stats()[shipping.ParcelFirstSubscriber].Skipped, len(parcels.skips.all())},
			} {
				if r.stats != uint64(r.told) {
					t.Errorf("%s: %d guard skips counted, %d told to OnSkip", r.name, r.stats, r.told)
				}
			}
		})
	}
}
