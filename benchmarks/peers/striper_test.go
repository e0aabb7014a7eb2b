package peers

import (
	"hash/crc32"
	"strconv"
	"testing"
)

// TestStriperIsCRC32 checks that the striper computes crc32.ChecksumIEEE.
func TestStriperIsCRC32(t *testing.T) {
	s := newStriper(1 << 31)
	for i := range 1000 {
		key := "key-" + strconv.Itoa(i)
		if got, want := uint32(s.of(key)), crc32.ChecksumIEEE([]byte(key))%(1<<31); got != want {
			t.Fatalf("%s: stripe %d, want %d", key, got, want)
		}
	}
}

// TestStriperAllocs checks that picking a stripe does not allocate.
func TestStriperAllocs(t *testing.T) {
	s := newStriper(8)
	key := "key-1234"
	if n := testing.AllocsPerRun(100, func() { _ = s.of(key) }); n != 0 {
		t.Errorf("%v allocs per call", n)
	}
}
