package benchmarks

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a peer, a consumer or a cluster
// leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
