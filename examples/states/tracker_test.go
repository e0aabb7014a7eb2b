package states

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"

	"github.com/ordergen/ordergen/examples/states/shipping"
	"github.com/ordergen/ordergen/runtime"
)

// tracker is the tests' handler of every entity, in memory: it records,
// per key, what it applied, in order ("ShipmentScanned Leeds"). Returned
// shipments are not implemented: the guards acknowledge them.
type tracker struct {
	mu      sync.Mutex // guards applied
	applied map[string][]string
}

func newTracker() *tracker { return &tracker{applied: map[string][]string{}} }

func (tr *tracker) add(key, what string) error {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.applied[key] = append(tr.applied[key], what)
	return nil
}

// of returns what was applied to key, in order.
func (tr *tracker) of(_ context.Context, key string) ([]string, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.applied[key]), nil
}

// record is how trackers note an event: its name and its payload.
func record(ev interface{ EventName() string }) string {
	switch e := ev.(type) {
	case shipping.ShipmentScanned:
		return e.EventName() + " " + e.Location
	case shipping.ShipmentLocated:
		return e.EventName() + " " + e.Location
	case shipping.ParcelScanned:
		return e.EventName() + " " + e.Location
	case shipping.ParcelLocated:
		return e.EventName() + " " + e.Location
	case shipping.ContainerPositioned:
		return fmt.Sprintf("%s %g,%g", e.EventName(), e.Lat, e.Lng)
	case shipping.CrateWeighed:
		return fmt.Sprintf("%s %d", e.EventName(), e.Grams)
	}
	return ev.EventName()
}

// The keys of what the trackers applied: the entity, then its key.
func shipmentKey(id string) string  { return "Shipment/" + id }
func parcelKey(id string) string    { return "Parcel/" + id }
func containerKey(id string) string { return "Container/" + id }
func crateKey(id int64) string      { return fmt.Sprintf("Crate/%d", id) }

func (tr *tracker) HandleShipmentBooked(_ context.Context, e shipping.ShipmentBooked) error {
	return tr.add(shipmentKey(e.ShipmentID), record(e))
}
func (tr *tracker) HandleShipmentScanned(_ context.Context, e shipping.ShipmentScanned) error {
	return tr.add(shipmentKey(e.ShipmentID), record(e))
}
func (tr *tracker) HandleShipmentLocated(_ context.Context, e shipping.ShipmentLocated) error {
	return tr.add(shipmentKey(e.ShipmentID), record(e))
}
func (tr *tracker) HandleShipmentOutForDelivery(_ context.Context, e shipping.ShipmentOutForDelivery) error {
	return tr.add(shipmentKey(e.ShipmentID), record(e))
}
func (tr *tracker) HandleShipmentDelivered(_ context.Context, e shipping.ShipmentDelivered) error {
	return tr.add(shipmentKey(e.ShipmentID), record(e))
}
func (tr *tracker) HandleShipmentReturned(context.Context, shipping.ShipmentReturned) error {
	return runtime.ErrUnimplemented
}

func (tr *tracker) HandleParcelBooked(_ context.Context, e shipping.ParcelBooked) error {
	return tr.add(parcelKey(e.ParcelID), record(e))
}
func (tr *tracker) HandleParcelScanned(_ context.Context, e shipping.ParcelScanned) error {
	return tr.add(parcelKey(e.ParcelID), record(e))
}
func (tr *tracker) HandleParcelLocated(_ context.Context, e shipping.ParcelLocated) error {
	return tr.add(parcelKey(e.ParcelID), record(e))
}
func (tr *tracker) HandleParcelDelivered(_ context.Context, e shipping.ParcelDelivered) error {
	return tr.add(parcelKey(e.ParcelID), record(e))
}

func (tr *tracker) HandleContainerBatch(_ context.Context, key string, events []shipping.ContainerEvent) error {
	for _, e := range events {
		tr.add(containerKey(key), record(e))
	}
	return nil
}

func (tr *tracker) HandleCratePacked(_ context.Context, e shipping.CratePacked) error {
	return tr.add(crateKey(e.CrateID), record(e))
}
func (tr *tracker) HandleCrateWeighed(_ context.Context, e shipping.CrateWeighed) error {
	return tr.add(crateKey(e.CrateID), record(e))
}
func (tr *tracker) HandleCrateShipped(_ context.Context, e shipping.CrateShipped) error {
	return tr.add(crateKey(e.CrateID), record(e))
}

// sqlTracker is the tests' transactional handler of every entity: it
// writes what it applied to a table of the store, in the transaction the
// guards commit (a group's work may run again: only tx keeps its writes).
type sqlTracker struct{ db *sql.DB }

func newSQLTracker(ctx context.Context, db *sql.DB) (*sqlTracker, error) {
	_, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS applied (key TEXT NOT NULL, n INTEGER NOT NULL, what TEXT NOT NULL, PRIMARY KEY (key, n))`)
	if err != nil {
		return nil, fmt.Errorf("create table applied: %w", err)
	}
	return &sqlTracker{db: db}, nil
}

func (tr *sqlTracker) add(ctx context.Context, tx *sql.Tx, key, what string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO applied (key, n, what) SELECT $1, COUNT(*), $2 FROM applied WHERE key = $1`, key, what)
	if err != nil {
		return fmt.Errorf("record %s of %s: %w", what, key, err)
	}
	return nil
}

// of returns what was applied to key, in order.
func (tr *sqlTracker) of(ctx context.Context, key string) ([]string, error) {
	rows, err := tr.db.QueryContext(ctx, `SELECT what FROM applied WHERE key = $1 ORDER BY n`, key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var what string
		if err := rows.Scan(&what); err != nil {
			return nil, err
		}
		out = append(out, what)
	}
	return out, rows.Err()
}

func (tr *sqlTracker) HandleShipmentBooked(ctx context.Context, tx *sql.Tx, e shipping.ShipmentBooked) error {
	return tr.add(ctx, tx, shipmentKey(e.ShipmentID), record(e))
}
func (tr *sqlTracker) HandleShipmentScanned(ctx context.Context, tx *sql.Tx, e shipping.ShipmentScanned) error {
	return tr.add(ctx, tx, shipmentKey(e.ShipmentID), record(e))
}
func (tr *sqlTracker) HandleShipmentLocated(ctx context.Context, tx *sql.Tx, e shipping.ShipmentLocated) error {
	return tr.add(ctx, tx, shipmentKey(e.ShipmentID), record(e))
}
func (tr *sqlTracker) HandleShipmentOutForDelivery(ctx context.Context, tx *sql.Tx, e shipping.ShipmentOutForDelivery) error {
	return tr.add(ctx, tx, shipmentKey(e.ShipmentID), record(e))
}
func (tr *sqlTracker) HandleShipmentDelivered(ctx context.Context, tx *sql.Tx, e shipping.ShipmentDelivered) error {
	return tr.add(ctx, tx, shipmentKey(e.ShipmentID), record(e))
}
func (tr *sqlTracker) HandleShipmentReturned(context.Context, *sql.Tx, shipping.ShipmentReturned) error {
	return runtime.ErrUnimplemented
}

func (tr *sqlTracker) HandleParcelBooked(ctx context.Context, tx *sql.Tx, e shipping.ParcelBooked) error {
	return tr.add(ctx, tx, parcelKey(e.ParcelID), record(e))
}
func (tr *sqlTracker) HandleParcelScanned(ctx context.Context, tx *sql.Tx, e shipping.ParcelScanned) error {
	return tr.add(ctx, tx, parcelKey(e.ParcelID), record(e))
}
func (tr *sqlTracker) HandleParcelLocated(ctx context.Context, tx *sql.Tx, e shipping.ParcelLocated) error {
	return tr.add(ctx, tx, parcelKey(e.ParcelID), record(e))
}
func (tr *sqlTracker) HandleParcelDelivered(ctx context.Context, tx *sql.Tx, e shipping.ParcelDelivered) error {
	return tr.add(ctx, tx, parcelKey(e.ParcelID), record(e))
}

func (tr *sqlTracker) HandleContainerBatch(ctx context.Context, tx *sql.Tx, key string, events []shipping.ContainerEvent) error {
	for _, e := range events {
		if err := tr.add(ctx, tx, containerKey(key), record(e)); err != nil {
			return err
		}
	}
	return nil
}

func (tr *sqlTracker) HandleCratePacked(ctx context.Context, tx *sql.Tx, e shipping.CratePacked) error {
	return tr.add(ctx, tx, crateKey(e.CrateID), record(e))
}
func (tr *sqlTracker) HandleCrateWeighed(ctx context.Context, tx *sql.Tx, e shipping.CrateWeighed) error {
	return tr.add(ctx, tx, crateKey(e.CrateID), record(e))
}
func (tr *sqlTracker) HandleCrateShipped(ctx context.Context, tx *sql.Tx, e shipping.CrateShipped) error {
	return tr.add(ctx, tx, crateKey(e.CrateID), record(e))
}
