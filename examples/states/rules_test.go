package states

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/ordergen/ordergen/examples/states/shipping"
)

const (
	// The reasons of the guards' skips in the tests.
	lateInTransit     = "late transition: state InTransit ranks below OutForDelivery"
	locatedDelivered  = "ShipmentLocated applies only in InTransit or OutForDelivery, not in Delivered"
	locatedNoState    = "ShipmentLocated applies only in InTransit or OutForDelivery, and the Shipment has no state yet"
	returnedDelivered = "state Returned may be entered only from InTransit or OutForDelivery"
	staleVersion      = "duplicate or stale version"
)

// With a version (Shipment): a second scan while the shipment is in
// InTransit applies, since its version says it is newer (before issue 42
// the state guard skipped it as "already in state InTransit"); only a move
// to a state ranked below the current one is late. An event with in:
// applies within its states and is skipped, with its reason, outside
// them, and before any state. A copy of an applied event is the version
// guard's to skip. Each skip still uses up its version.
func TestVersionedEqualRankAppliesAndInHoldsWithinItsStates(t *testing.T) {
	for _, st := range stores(t) {
		t.Run(st.name, func(t *testing.T) {
			r := startShipments(t, st)
			publish[shipping.ShipmentEvent](t, r.d,
				shipping.ShipmentBooked{ShipmentID: "s-1", Version: 1, Sender: "ada"},
				shipping.ShipmentScanned{ShipmentID: "s-1", Version: 2, Location: "Leeds"},
				shipping.ShipmentScanned{ShipmentID: "s-1", Version: 3, Location: "York"}, // InTransit again: applies
				shipping.ShipmentScanned{ShipmentID: "s-1", Version: 3, Location: "York"}, // a copy: the version guard's
				shipping.ShipmentLocated{ShipmentID: "s-1", Version: 4, Location: "A1"},
				shipping.ShipmentOutForDelivery{ShipmentID: "s-1", Version: 5, Courier: "bob"},
				shipping.ShipmentLocated{ShipmentID: "s-1", Version: 6, Location: "van"},
				shipping.ShipmentScanned{ShipmentID: "s-1", Version: 7, Location: "Leeds"}, // late
				shipping.ShipmentDelivered{ShipmentID: "s-1", Version: 8},
				shipping.ShipmentLocated{ShipmentID: "s-1", Version: 9, Location: "porch"}, // outside its states
				shipping.ShipmentReturned{ShipmentID: "s-1", Version: 10},                  // not from Delivered
			)
			wantApplied(t, r.applied, shipmentKey("s-1"), "ShipmentBooked", "ShipmentScanned Leeds", "ShipmentScanned York",
				"ShipmentLocated A1", "ShipmentOutForDelivery", "ShipmentLocated van", "ShipmentDelivered")
			wantSkips(t, r.skips,
				skip{"s-1", "ShipmentScanned York", staleVersion},
				skip{"s-1", "ShipmentScanned Leeds", lateInTransit},
				skip{"s-1", "ShipmentLocated porch", locatedDelivered},
				skip{"s-1", "ShipmentReturned", returnedDelivered},
			)
			wantShipment(t, r.d, "s-1", shipping.ShipmentStateDelivered, 10)

			// Before any state; a branch state entered twice applies with a
			// version (both times unimplemented: acknowledged, not skipped
			// by a guard).
			publish[shipping.ShipmentEvent](t, r.d,
				shipping.ShipmentLocated{ShipmentID: "s-2", Version: 1, Location: "depot"},
				shipping.ShipmentBooked{ShipmentID: "s-2", Version: 2, Sender: "ada"},
				shipping.ShipmentScanned{ShipmentID: "s-2", Version: 3, Location: "Leeds"},
				shipping.ShipmentReturned{ShipmentID: "s-2", Version: 4, Reason: "refused"},
				shipping.ShipmentReturned{ShipmentID: "s-2", Version: 5, Reason: "refused again"},
			)
			wantApplied(t, r.applied, shipmentKey("s-2"), "ShipmentBooked", "ShipmentScanned Leeds")
			wantShipment(t, r.d, "s-2", shipping.ShipmentStateReturned, 5)
			wantSkips(t, r.skips,
				skip{"s-1", "ShipmentScanned York", staleVersion},
				skip{"s-1", "ShipmentScanned Leeds", lateInTransit},
				skip{"s-1", "ShipmentLocated porch", locatedDelivered},
				skip{"s-1", "ShipmentReturned", returnedDelivered},
				skip{"s-2", "ShipmentLocated depot", locatedNoState},
			)
			stats := r.d.Stats()[shipping.ShipmentFirstSubscriber]
			if stats.Handled != 9 || stats.Skipped != 7 || stats.Unimplemented != 2 || stats.Pending != 0 {
				t.Errorf("stats %+v: want 9 handled, 7 skipped of which 2 unimplemented", stats)
			}
		})
	}
}

func wantShipment(t *testing.T, d *shipping.ShipmentDispatcher, key string, state shipping.ShipmentState, version uint64) {
	t.Helper()
	s, err := d.State(t.Context(), shipping.ShipmentFirstSubscriber, key)
	if err != nil || s != state {
		t.Errorf("%s: state %q, %v; want %s", key, s, err, state)
	}
	v, err := d.Version(t.Context(), shipping.ShipmentFirstSubscriber, key)
	if err != nil || v != version {
		t.Errorf("%s: version %d, %v; want %d", key, v, err, version)
	}
}

// debugLog is a logger that keeps what it is told at debug level and above.
type debugLog struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (l *debugLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *debugLog) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.buf.String()), "\n")
}

func (l *debugLog) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Without a version (Parcel, the case): a second scan with to:
// InTransit while the parcel is in InTransit is skipped as a duplicate,
// and the first such skip of the subscriber is logged once at debug level
// with its key and reason; a scan with in: [InTransit] applies there. The
// late and out-of-state skips are as with a version.
func TestUnversionedEqualRankIsADuplicateLoggedOnce(t *testing.T) {
	for _, st := range stores(t) {
		t.Run(st.name, func(t *testing.T) {
			log := &debugLog{}
			r := startParcels(t, st, func(c *shipping.ParcelConfig) { c.Logger = log.logger() })
			publish[shipping.ParcelEvent](t, r.d,
				shipping.ParcelBooked{ParcelID: "p-1", Sender: "ada"},
				shipping.ParcelScanned{ParcelID: "p-1", Location: "Leeds"},
				shipping.ParcelScanned{ParcelID: "p-1", Location: "York"}, // a duplicate without a version
				shipping.ParcelLocated{ParcelID: "p-1", Location: "York"}, // what the scan should have been
				shipping.ParcelDelivered{ParcelID: "p-1"},
				shipping.ParcelLocated{ParcelID: "p-1", Location: "porch"},
				shipping.ParcelScanned{ParcelID: "p-1", Location: "Leeds"},
			)
			// After p-1's: keys run in parallel, and the log keeps the first.
			publish[shipping.ParcelEvent](t, r.d,
				shipping.ParcelLocated{ParcelID: "p-2", Location: "depot"},
				shipping.ParcelBooked{ParcelID: "p-2", Sender: "bob"},
				shipping.ParcelBooked{ParcelID: "p-2", Sender: "bob"}, // a second duplicate: not logged
			)
			wantApplied(t, r.applied, parcelKey("p-1"), "ParcelBooked", "ParcelScanned Leeds", "ParcelLocated York", "ParcelDelivered")
			wantApplied(t, r.applied, parcelKey("p-2"), "ParcelBooked")
			wantSkips(t, r.skips,
				skip{"p-1", "ParcelScanned York", "duplicate: already in state InTransit"},
				skip{"p-1", "ParcelLocated porch", "ParcelLocated applies only in InTransit, not in Delivered"},
				skip{"p-1", "ParcelScanned Leeds", "late transition: state InTransit ranks below Delivered"},
				skip{"p-2", "ParcelLocated depot", "ParcelLocated applies only in InTransit, and the Parcel has no state yet"},
				skip{"p-2", "ParcelBooked", "duplicate: already in state Booked"},
			)
			var logged []string
			for _, l := range log.lines() {
				if strings.Contains(l, "as a duplicate") {
					logged = append(logged, l)
				}
			}
			if len(logged) != 1 || !strings.Contains(logged[0], "level=DEBUG") || !strings.Contains(logged[0], "key=p-1") ||
				!strings.Contains(logged[0], `reason="duplicate: already in state InTransit"`) || !strings.Contains(logged[0], "event=ParcelScanned") {
				t.Errorf("logged %q: want the first duplicate once, at debug level, with its key, event and reason", logged)
			}
			s, err := r.d.State(t.Context(), shipping.ParcelFirstSubscriber, "p-1")
			if err != nil || s != shipping.ParcelStateDelivered {
				t.Errorf("p-1: state %q, %v; want Delivered", s, err)
			}
			stats := r.d.Stats()[shipping.ParcelFirstSubscriber]
			if stats.Handled != 5 || stats.Skipped != 5 || stats.Unimplemented != 0 {
				t.Errorf("stats %+v: want 5 handled, 5 skipped by the guards", stats)
			}
		})
	}
}

// In batches (Container, with a version; with group commit in a
// transaction): the guards decide each event of a batch in order, as for
// one event, the current state moving along the batch.
func TestBatchesDecideEachEventByTheSameRules(t *testing.T) {
	for _, st := range stores(t) {
		t.Run(st.name, func(t *testing.T) {
			r := startContainers(t, st)
			publish[shipping.ContainerEvent](t, r.d,
				shipping.ContainerLoaded{ContainerID: "c-1", Version: 1, Port: "Felixstowe"},
				shipping.ContainerSailed{ContainerID: "c-1", Version: 2, Vessel: "Ever Given"},
				shipping.ContainerSailed{ContainerID: "c-1", Version: 3, Vessel: "Ever Given"}, // AtSea again: applies
				shipping.ContainerSailed{ContainerID: "c-1", Version: 3, Vessel: "Ever Given"}, // a copy
				shipping.ContainerPositioned{ContainerID: "c-1", Version: 4, Lat: 51.5, Lng: 1.3},
				shipping.ContainerUnloaded{ContainerID: "c-1", Version: 5, Port: "Rotterdam"},
				shipping.ContainerPositioned{ContainerID: "c-1", Version: 6, Lat: 51.9, Lng: 4.1}, // outside AtSea
				shipping.ContainerSailed{ContainerID: "c-1", Version: 7, Vessel: "Ever Given"},    // late
				shipping.ContainerPositioned{ContainerID: "c-2", Version: 1, Lat: 0, Lng: 0},      // no state yet
			)
			wantApplied(t, r.applied, containerKey("c-1"), "ContainerLoaded", "ContainerSailed", "ContainerSailed", "ContainerPositioned 51.5,1.3", "ContainerUnloaded")
			wantApplied(t, r.applied, containerKey("c-2"))
			wantSkips(t, r.skips,
				skip{"c-1", "ContainerSailed", staleVersion},
				skip{"c-1", "ContainerPositioned 51.9,4.1", "ContainerPositioned applies only in AtSea, not in Unloaded"},
				skip{"c-1", "ContainerSailed", "late transition: state AtSea ranks below Unloaded"},
				skip{"c-2", "ContainerPositioned 0,0", "ContainerPositioned applies only in AtSea, and the Container has no state yet"},
			)
			for key, want := range map[string]struct {
				state   shipping.ContainerState
				version uint64
			}{"c-1": {shipping.ContainerStateUnloaded, 7}, "c-2": {"", 1}} {
				s, err := r.d.State(t.Context(), shipping.ContainerFirstSubscriber, key)
				v, verr := r.d.Version(t.Context(), shipping.ContainerFirstSubscriber, key)
				if err != nil || verr != nil || s != want.state || v != want.version {
					t.Errorf("%s: state %q, version %d (%v, %v); want %q, %d", key, s, v, err, verr, want.state, want.version)
				}
			}
		})
	}
}

// One event at a time in groups (Crate, without a version; group commit in
// a transaction): the same rules.
func TestGroupsDecideEachEventByTheSameRules(t *testing.T) {
	for _, st := range stores(t) {
		t.Run(st.name, func(t *testing.T) {
			r := startCrates(t, st)
			publish[shipping.CrateEvent](t, r.d,
				shipping.CratePacked{CrateID: 7},
				shipping.CrateWeighed{CrateID: 7, Grams: 100},
				shipping.CratePacked{CrateID: 7}, // a duplicate without a version
				shipping.CrateWeighed{CrateID: 7, Grams: 120},
				shipping.CrateShipped{CrateID: 7},
				shipping.CrateWeighed{CrateID: 7, Grams: 5}, // outside Packed
				shipping.CratePacked{CrateID: 7},            // late
			)
			wantApplied(t, r.applied, crateKey(7), "CratePacked", "CrateWeighed 100", "CrateWeighed 120", "CrateShipped")
			wantSkips(t, r.skips,
				skip{"7", "CratePacked", "duplicate: already in state Packed"},
				skip{"7", "CrateWeighed 5", "CrateWeighed applies only in Packed, not in Shipped"},
				skip{"7", "CratePacked", "late transition: state Packed ranks below Shipped"},
			)
			if s, err := r.d.State(t.Context(), shipping.CrateFirstSubscriber, 7); err != nil || s != shipping.CrateStateShipped {
				t.Errorf("state %q, %v; want Shipped", s, err)
			}
		})
	}
}
