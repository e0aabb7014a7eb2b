package sqlstore_test

import (
	"testing"

	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/storetest"
)

// TestConformance runs the stores' shared suite on SQLite and PostgreSQL.
func TestConformance(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		storetest.Run(t, storetest.Harness{Open: func(t *testing.T) durable.Store { return b.handle(t) }})
	})
}
