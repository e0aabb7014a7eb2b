package peers

import "hash/crc32"

// striper maps a key to one of n stripes: crc32(key) % n, with the IEEE
// polynomial. It computes the checksum byte by byte over the string, which
// gives crc32.ChecksumIEEE's value without converting the key to a []byte
// (a conversion that escapes, and so allocates, on every call).
type striper struct {
	tab *crc32.Table
	n   uint32
}

// newStriper returns a striper over n stripes.
func newStriper(n int) striper {
	return striper{tab: crc32.MakeTable(crc32.IEEE), n: uint32(n)}
}

// of returns key's stripe.
func (s striper) of(key string) int {
	crc := ^uint32(0)
	for i := 0; i < len(key); i++ {
		crc = s.tab[byte(crc)^key[i]] ^ (crc >> 8)
	}
	return int(^crc % s.n)
}
