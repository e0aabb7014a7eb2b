package workload

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when one leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
