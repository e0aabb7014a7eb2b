package sqlstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/durable"
)

// BenchmarkGroup measures the store's side of group commit: BeginGroup over
// 1000 keys that have rows, and a Commit advancing every one of them, with
// no handler writes. events/s counts keys advanced per second.
//
//	ORDERGEN_TEST_POSTGRES=... go test -run '^$' -bench BenchmarkGroup ./runtime/sqlstore/
func BenchmarkGroup(b *testing.B) {
	const size = 1000
	for _, c := range []struct {
		name string
		be   func(testing.TB) backend
	}{{"sqlite", sqliteBackend}, {"postgres", postgresBackend}} {
		b.Run(c.name, func(b *testing.B) {
			s := c.be(b).handleClosed(b)
			ctx := b.Context()
			ns := "bench-group-" + randomSuffix(b)
			keys := make([]string, size)
			for i := range keys {
				keys[i] = fmt.Sprintf("key-%06d", i)
			}
			writes := make([]durable.KeyWrite, size)
			round := func() {
				gtx, err := s.BeginGroup(ctx, ns, keys)
				if err != nil {
					b.Fatal(err)
				}
				for i, k := range keys {
					r := gtx.Read(k)
					writes[i] = durable.KeyWrite{Key: k, KeyState: durable.KeyState{Version: r.Version + 1, State: "S"}}
				}
				if err := gtx.Commit(ctx, writes); err != nil {
					b.Fatal(err)
				}
			}
			round() // the keys get their rows
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				round()
			}
			b.ReportMetric(float64(b.N*size)/time.Since(start).Seconds(), "events/s")
		})
	}
}
