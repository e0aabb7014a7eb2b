package diag

import "testing"

func TestSuggest(t *testing.T) {
	candidates := []string{"timeout", "retry", "backlog", "string", "int64", "Running", "Paused", "go", "snake_case", "camelCase"}
	for word, want := range map[string]string{
		"timeuot":    "timeout", // swapped letters
		"retyr":      "retry",   // swapped letters
		"baklog":     "backlog", // a missing letter
		"String":     "string",  // case
		"strng":      "string",  // a missing letter
		"int46":      "int64",   // swapped digits
		"Runing":     "Running", // a missing letter
		"snake-case": "snake_case",
		"camelcase":  "camelCase",
		"semver":     "", // nothing close
		"decimal":    "", // nothing close
		"gp":         "go",
		"ab":         "", // two edits from go: as many as it has letters
		"timeout":    "", // itself
		"x":          "", // too short to guess
		"Pauzed":     "Paused",
		"retries":    "retry",   // the plural of a key, three edits away
		"Retries":    "retry",   // and in another case
		"timeouts":   "timeout", // one edit away anyway
		"backlogs":   "backlog",
		"strings":    "string",
	} {
		if got := Closest(word, candidates); got != want {
			t.Errorf("Closest(%q) = %q, want %q", word, got, want)
		}
	}
	for word, want := range map[string]string{
		"entity":  "entities", // the singular of a plural key
		"branch":  "branches",
		"state":   "states",
		"retries": "", // no candidate of that stem
		"is":      "", // a word of one letter once its s is gone
		"class":   "", // ss is no plural
	} {
		if got := Closest(word, []string{"entities", "branches", "states", "i"}); got != want {
			t.Errorf("Closest(%q) = %q, want %q", word, got, want)
		}
	}
	if got := Suggest("retyr", candidates); got != " (did you mean retry?)" {
		t.Errorf("Suggest = %q", got)
	}
	if got := Suggest("zzz", candidates); got != "" {
		t.Errorf("Suggest of nothing close = %q", got)
	}
}
