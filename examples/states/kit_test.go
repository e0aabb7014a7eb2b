package states

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ordergen/ordergen/examples/states/shipping"
	"github.com/ordergen/ordergen/examples/states/shipping/shippingtest"
)

// quietParcels and quietShipments keep the kit's dispatchers quiet.
func quietParcels(c *shipping.ParcelConfig)     { c.Logger = quiet() }
func quietShipments(c *shipping.ShipmentConfig) { c.Logger = quiet() }

// parcelJourney is a parcel's events in publication order, its later scans
// with scan: ParcelScanned (to: InTransit, the schema) or
// ParcelLocated (in: [InTransit]).
func parcelJourney(id string, scan func(id, location string) shipping.ParcelEvent) []shipping.ParcelEvent {
	return []shipping.ParcelEvent{
		shipping.ParcelBooked{ParcelID: id, Sender: "ada"},
		shipping.ParcelScanned{ParcelID: id, Location: "Leeds"},
		scan(id, "York"),
		scan(id, "Durham"),
		shipping.ParcelDelivered{ParcelID: id},
	}
}

func scanned(id, location string) shipping.ParcelEvent {
	return shipping.ParcelScanned{ParcelID: id, Location: location}
}

func located(id, location string) shipping.ParcelEvent {
	return shipping.ParcelLocated{ParcelID: id, Location: location}
}

// The case. A parcel (no version) scanned at every depot with
// to: InTransit loses its later scans even in publication order: the
// in-order run fails, naming each with its key and the guard's reason. A
// chaotic delivery through the same guards loses the same scans, so
// comparing it with the in-order run alone catches nothing (shown first).
// With the scans written with in: [InTransit], the in-order run passes and
// every seed of chaos reaches it.
func TestKitFailsOnAnEventSkippedInOrderAndPassesWithIn(t *testing.T) {
	ctx := t.Context()
	wrong := parcelJourney("p-1", scanned)

	// What a chaos test compared: both sides drop York and Durham.
	got, want := newTracker(), newTracker()
	h, err := shippingtest.NewParcelHarness(got, quietParcels)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	if _, err := h.Deliver(ctx, wrong, shippingtest.Chaos{Seed: 1, Duplicates: 0.5}); err != nil {
		t.Fatal(err)
	}
	in, err := shippingtest.NewParcelHarness(want, quietParcels)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close(ctx)
	report, err := in.Deliver(ctx, wrong, shippingtest.Chaos{})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := got.of(ctx, parcelKey("p-1"))
	w, _ := want.of(ctx, parcelKey("p-1"))
	if !slices.Equal(g, w) || slices.Contains(w, "ParcelScanned York") {
		t.Fatalf("chaos applied %q, in order %q: want both without York", g, w)
	}
	if len(report.Skips) != 2 || report.Skips[0].Reason != "duplicate: already in state InTransit" {
		t.Fatalf("the in-order delivery reports the skips %+v", report.Skips)
	}

	// The kit's in-order run fails, naming each skipped event.
	err = shippingtest.ApplyParcelInOrder(ctx, newTracker(), wrong, quietParcels)
	if !errors.Is(err, shippingtest.ErrSkippedInOrder) {
		t.Fatalf("in order: %v, want ErrSkippedInOrder", err)
	}
	for _, want := range []string{
		`ParcelScanned (key "p-1"): duplicate: already in state InTransit`,
		"2 of them",
		"takes in: [states] in the schema, not to:",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}

	// A test that means the duplicates allows them by their reason.
	allowing, err := shippingtest.NewParcelHarness(newTracker(), quietParcels)
	if err != nil {
		t.Fatal(err)
	}
	defer allowing.Close(ctx)
	if _, err := allowing.ApplyInOrder(ctx, wrong, "duplicate: already in state InTransit"); err != nil {
		t.Fatalf("in order, the duplicates allowed: %v", err)
	}

	// With in:, in order every scan applies, and so under chaos.
	right := parcelJourney("p-1", located)
	want = newTracker()
	if err := shippingtest.ApplyParcelInOrder(ctx, want, right, quietParcels); err != nil {
		t.Fatalf("in order with in: %v", err)
	}
	w, _ = want.of(ctx, parcelKey("p-1"))
	if !slices.Equal(w, []string{"ParcelBooked", "ParcelScanned Leeds", "ParcelLocated York", "ParcelLocated Durham", "ParcelDelivered"}) {
		t.Fatalf("in order with in: applied %q", w)
	}
	// Without a version nothing tells a stale copy of a position from a new
	// one: the chaos is duplicates, delivered right after their events.
	for seed := range 20 {
		got := newTracker()
		h, err := shippingtest.NewParcelHarness(got, quietParcels)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Deliver(ctx, right, shippingtest.Chaos{Seed: seed, Duplicates: 0.5}); err != nil {
			t.Fatal(err)
		}
		if err := h.Close(ctx); err != nil {
			t.Fatal(err)
		}
		g, _ := got.of(ctx, parcelKey("p-1"))
		if g = slices.Compact(g); !slices.Equal(g, w) {
			t.Fatalf("seed %d: applied %q (repeats removed), in order %q", seed, g, w)
		}
	}
}

// With a version (Shipment): a scan with to: InTransit after the shipment
// went out for delivery is late, in publication order too: the in-order
// run fails, naming the event, its key, version and reason; with the
// position written with in: [InTransit, OutForDelivery] it passes, and
// every seed of chaos (duplicates, redeliveries, reorderings, gaps)
// reaches the in-order run's result.
func TestKitNamesTheVersionOfALateEventAndPassesWithIn(t *testing.T) {
	ctx := t.Context()
	journey := func(last shipping.ShipmentEvent) []shipping.ShipmentEvent {
		return shippingtest.SequenceShipment(
			shipping.ShipmentBooked{ShipmentID: "s-1", Sender: "ada"},
			shipping.ShipmentScanned{ShipmentID: "s-1", Location: "Leeds"},
			shipping.ShipmentScanned{ShipmentID: "s-1", Location: "York"}, // applies: a newer version
			shipping.ShipmentOutForDelivery{ShipmentID: "s-1", Courier: "bob"},
			last,
			shipping.ShipmentDelivered{ShipmentID: "s-1"},
		)
	}
	wrong := journey(shipping.ShipmentScanned{ShipmentID: "s-1", Location: "van"})
	err := shippingtest.ApplyShipmentInOrder(ctx, newTracker(), wrong, quietShipments)
	if !errors.Is(err, shippingtest.ErrSkippedInOrder) ||
		!strings.Contains(err.Error(), `ShipmentScanned (key "s-1", version 5): late transition: state InTransit ranks below OutForDelivery`) ||
		!strings.Contains(err.Error(), "1 of them") {
		t.Fatalf("in order: %v", err)
	}

	right := journey(shipping.ShipmentLocated{ShipmentID: "s-1", Location: "van"})
	want := newTracker()
	if err := shippingtest.ApplyShipmentInOrder(ctx, want, right, quietShipments); err != nil {
		t.Fatalf("in order with in: %v", err)
	}
	w, _ := want.of(ctx, shipmentKey("s-1"))
	if !slices.Equal(w, []string{"ShipmentBooked", "ShipmentScanned Leeds", "ShipmentScanned York", "ShipmentOutForDelivery", "ShipmentLocated van", "ShipmentDelivered"}) {
		t.Fatalf("in order with in: applied %q", w)
	}
	for seed := range 30 {
		got := newTracker()
		h, err := shippingtest.NewShipmentHarness(got, quietShipments)
		if err != nil {
			t.Fatal(err)
		}
		report, err := h.Deliver(ctx, right, shippingtest.Chaos{Seed: seed, Duplicates: 0.3, Redeliveries: 0.3, Reorder: 3, Gaps: 0.2})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if g, _ := got.of(ctx, shipmentKey("s-1")); !slices.Equal(g, w) {
			t.Fatalf("seed %d: applied %q, in order %q", seed, g, w)
		}
		// Every skip of the chaotic delivery is a copy's.
		if copies := report.Count(shippingtest.Duplicate) + report.Count(shippingtest.Redelivery); len(report.Skips) != copies {
			t.Fatalf("seed %d: %d skips %+v, want the %d copies'", seed, len(report.Skips), report.Skips, copies)
		}
	}
}
