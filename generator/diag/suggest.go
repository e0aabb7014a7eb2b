package diag

import (
	"slices"
	"strings"
)

// Suggest returns " (did you mean X?)" for the candidate X closest to word
// by edit distance (letters swapped count as one edit, case is ignored),
// or "" when none is close: at most one edit for words of up to four
// letters, two for longer ones, and never as many edits as X has letters.
// A word of more than four letters and a candidate that differ only in
// number match as if equal ("retries" suggests retry, "entity" entities),
// however far apart their letters are. Ties go to the earlier candidate.
func Suggest(word string, candidates []string) string {
	if m := Closest(word, candidates); m != "" {
		return " (did you mean " + m + "?)"
	}
	return ""
}

// Closest returns the candidate Suggest would suggest, or "".
func Closest(word string, candidates []string) string {
	w := strings.ToLower(word)
	limit := 1
	if len([]rune(w)) > 4 {
		limit = 2
	}
	best, bestD := "", limit+1
	for _, c := range candidates {
		if c == word {
			continue
		}
		lc := strings.ToLower(c)
		d := distance(w, lc)
		if len(w) > 4 && singular(w) == singular(lc) {
			d = 0
		}
		if d < bestD && d < len([]rune(c)) {
			best, bestD = c, d
		}
	}
	return best
}

// singular returns the English singular of a plural word (retries: retry,
// branches: branch, events: event), or the word itself: keys of a schema
// are often written in the other number than their name has.
func singular(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"):
		return w[:len(w)-2]
	case len(w) > 1 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}

// distance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and transpositions of adjacent
// letters, each one edit.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	rows := make([][]int, len(ra)+1)
	for i := range rows {
		rows[i] = make([]int, len(rb)+1)
		rows[i][0] = i
	}
	for j := range rb {
		rows[0][j+1] = j + 1
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			rows[i][j] = slices.Min([]int{rows[i-1][j] + 1, rows[i][j-1] + 1, rows[i-1][j-1] + cost})
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				rows[i][j] = min(rows[i][j], rows[i-2][j-2]+1)
			}
		}
	}
	return rows[len(ra)][len(rb)]
}
