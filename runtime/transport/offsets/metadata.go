package offsets

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// The commit metadata of a partition lists the offsets above the committed
// one that are already finished, so that a restart skips them. Its bytes,
// before base64 (standard alphabet, no padding), are:
//
//	format     1 byte: 0x11 bitset, 0x12 runs (high nibble: version 1)
//	committed  uvarint: the committed offset C this map belongs to
//	span       uvarint: L, the map describes offsets C+1 .. C+L
//	bitset     ceil(L/8) bytes, bit i (LSB first) set: offset C+1+i finished
//	runs       uvarints, alternately a run of finished offsets (the first may
//	           be 0 long) and a run of unfinished ones, adding up to L
//
// The encoder writes whichever of the two is shorter. A map whose committed
// offset is not the partition's committed offset, or that does not decode,
// is ignored: the records run again, which is safe.
const (
	formatBitset byte = 0x11
	formatRuns   byte = 0x12
)

// Span is the half-open range of offsets [From, To).
type Span struct{ From, To int64 }

// Encode returns the metadata for committed offset c and the finished
// spans above it (sorted, disjoint, not touching, all above c), the longest
// prefix of them whose text fits in max bytes, and how many spans it kept.
func Encode(c int64, spans []Span, max int) (string, int) {
	n := len(spans)
	if metadataLen(c, spans) > max {
		// Keep the most spans that fit: the length grows with the spans kept.
		lo, hi := 0, n // fits(lo) holds; fits(hi) does not
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if metadataLen(c, spans[:mid]) <= max {
				lo = mid
			} else {
				hi = mid
			}
		}
		n = lo
	}
	spans = spans[:n]
	if n == 0 {
		return "", 0
	}
	span := uint64(spans[n-1].To - c - 1)
	raw := make([]byte, 0, rawLen(c, spans))
	bitsetLen, runsLen := sizes(c, spans)
	if bitsetLen <= runsLen {
		raw = append(raw, formatBitset)
		raw = binary.AppendUvarint(raw, uint64(c))
		raw = binary.AppendUvarint(raw, span)
		set := make([]byte, (span+7)/8)
		for _, s := range spans {
			for o := s.From; o < s.To; o++ {
				i := o - c - 1
				set[i/8] |= 1 << (i % 8)
			}
		}
		raw = append(raw, set...)
	} else {
		raw = append(raw, formatRuns)
		raw = binary.AppendUvarint(raw, uint64(c))
		raw = binary.AppendUvarint(raw, span)
		next := c + 1
		for _, s := range spans {
			if s.From > next {
				if next == c+1 {
					raw = binary.AppendUvarint(raw, 0) // no finished run first
				}
				raw = binary.AppendUvarint(raw, uint64(s.From-next))
			}
			raw = binary.AppendUvarint(raw, uint64(s.To-s.From))
			next = s.To
		}
	}
	return base64.RawStdEncoding.EncodeToString(raw), n
}

// metadataLen is the length of the text Encode writes for spans.
func metadataLen(c int64, spans []Span) int {
	if len(spans) == 0 {
		return 0
	}
	return base64.RawStdEncoding.EncodedLen(rawLen(c, spans))
}

func rawLen(c int64, spans []Span) int {
	b, r := sizes(c, spans)
	return min(b, r)
}

// sizes returns the raw lengths of the bitset and the runs encodings.
func sizes(c int64, spans []Span) (bitset, runs int) {
	span := uint64(spans[len(spans)-1].To - c - 1)
	header := 1 + uvarintLen(uint64(c)) + uvarintLen(span)
	bitset = header + int((span+7)/8)
	runs = header
	next := c + 1
	for _, s := range spans {
		if s.From > next {
			if next == c+1 {
				runs++
			}
			runs += uvarintLen(uint64(s.From - next))
		}
		runs += uvarintLen(uint64(s.To - s.From))
		next = s.To
	}
	return bitset, runs
}

func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// ErrMetadata is the error of Decode for text that is not a map of
// finished offsets.
var ErrMetadata = errors.New("not ordergen commit metadata")

// Decode returns the finished spans that meta lists above committed
// offset c. It fails for text that is not such a map, or a map of another
// committed offset.
func Decode(meta string, c int64) ([]Span, error) {
	if meta == "" {
		return nil, nil
	}
	raw, err := base64.RawStdEncoding.DecodeString(meta)
	if err != nil || len(raw) == 0 {
		return nil, ErrMetadata
	}
	format, rest := raw[0], raw[1:]
	mc, n := binary.Uvarint(rest)
	if n <= 0 {
		return nil, ErrMetadata
	}
	rest = rest[n:]
	if int64(mc) != c || c < 0 {
		return nil, fmt.Errorf("%w: the map is for offset %d, the commit is %d", ErrMetadata, mc, c)
	}
	length, n := binary.Uvarint(rest)
	if n <= 0 || length > 1<<40 {
		return nil, ErrMetadata
	}
	rest = rest[n:]
	var spans []Span
	add := func(from, to int64) {
		if k := len(spans); k > 0 && spans[k-1].To == from {
			spans[k-1].To = to
			return
		}
		spans = append(spans, Span{From: from, To: to})
	}
	switch format {
	case formatBitset:
		if uint64(len(rest)) != (length+7)/8 {
			return nil, ErrMetadata
		}
		for i := uint64(0); i < length; i++ {
			if rest[i/8]&(1<<(i%8)) != 0 {
				o := c + 1 + int64(i)
				add(o, o+1)
			}
		}
	case formatRuns:
		next, finished := c+1, true
		for len(rest) > 0 {
			run, n := binary.Uvarint(rest)
			if n <= 0 || run > length {
				return nil, ErrMetadata
			}
			rest = rest[n:]
			if next+int64(run) > c+1+int64(length) {
				return nil, ErrMetadata
			}
			if finished && run > 0 {
				add(next, next+int64(run))
			}
			next += int64(run)
			finished = !finished
		}
	default:
		return nil, fmt.Errorf("%w: unknown format byte %#x", ErrMetadata, format)
	}
	return spans, nil
}
