package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ordergen/ordergen/generator/breaking"
)

// runBreaking is ordergen breaking -against OLD NEW, and ordergen
// breaking -rules.
func runBreaking(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("breaking")
	against := fs.String("against", "", "the older schema: a `FILE`, or git:REV for NEW as of a git revision")
	rules := fs.Bool("rules", false, "list the rules, each with its purpose")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *rules {
		if fs.NArg() != 0 || *against != "" {
			return usageError(stderr, "breaking", "-rules takes no other argument")
		}
		for _, r := range breaking.Rules() {
			fmt.Fprintf(stdout, "%-22s %s\n", r.ID, r.Purpose)
		}
		return exitOK
	}
	if *against == "" || fs.NArg() != 1 {
		return usageError(stderr, "breaking", "want -against OLD and exactly one NEW schema")
	}
	newPath := fs.Arg(0)
	oldName, oldSrc, err := readOld(*against, newPath)
	if err != nil {
		fmt.Fprintf(stderr, "ordergen: %v\n", err)
		return exitBad
	}
	newSrc, err := os.ReadFile(newPath)
	if err != nil {
		fmt.Fprintf(stderr, "ordergen: %v\n", err)
		return exitBad
	}
	old, diags := breaking.Load(oldSrc)
	if old == nil {
		fmt.Fprint(stderr, diags.Format(oldName))
		return exitBad
	}
	cur, diags := breaking.Load(newSrc)
	if cur == nil {
		fmt.Fprint(stderr, diags.Format(newPath))
		return exitBad
	}
	res := breaking.Accept(newSrc, breaking.Compare(old, cur))
	// A comment that cannot be used is an error, reported with every
	// change: reporting it alone hid the rest until it was fixed.
	fmt.Fprint(stderr, res.Problems.Format(newPath))
	for _, a := range res.Accepted {
		rule, msg, _ := strings.Cut(a.Change.Msg, ": ")
		fmt.Fprintf(stdout, "%s:%d:%d: accepted %s: %s (%s: %s)\n", newPath, a.Change.Pos.Line, a.Change.Pos.Col, rule, msg, breaking.AcceptMarker, a.Reason)
	}
	for _, u := range res.Unused.Items() {
		fmt.Fprintf(stderr, "%s:%d:%d: note: %s\n", newPath, u.Pos.Line, u.Pos.Col, u.Msg)
	}
	fmt.Fprint(stdout, res.Breaking.Format(newPath))
	if n := res.Breaking.Len(); n > 0 {
		fmt.Fprintf(stderr, "ordergen: %d breaking change(s) against %s (ordergen breaking -rules explains each rule; a comment # %s RULE_ID reason on the reported line accepts one)\n", n, oldName, breaking.AcceptMarker)
	}
	if n := res.Problems.Len(); n > 0 {
		fmt.Fprintf(stderr, "ordergen: %d %s comment(s) above cannot be used\n", n, breaking.AcceptMarker)
	}
	switch {
	case res.Breaking.Len() > 0 || res.Problems.Len() > 0:
		return exitBad
	case len(res.Accepted) > 0:
		fmt.Fprintf(stderr, "ordergen: %d breaking change(s) against %s, all accepted by %s comments\n", len(res.Accepted), oldName, breaking.AcceptMarker)
	default:
		// Silence is no answer for someone running it by hand.
		fmt.Fprintf(stdout, "%s: no breaking changes against %s\n", newPath, oldName)
	}
	return exitOK
}

// readOld reads the older schema: a file, or with git:REV, the file at
// newPath as of revision REV (git show REV:./file, run in its directory).
// It returns the name to report problems under.
func readOld(against, newPath string) (string, []byte, error) {
	rev, ok := strings.CutPrefix(against, "git:")
	if !ok {
		b, err := os.ReadFile(against)
		return against, b, err
	}
	if rev == "" || strings.HasPrefix(rev, "-") {
		return "", nil, fmt.Errorf("-against git:REV: %q is not a revision", rev)
	}
	dir, file := filepath.Split(newPath)
	if dir == "" {
		dir = "."
	}
	name := against + ":" + newPath
	cmd := exec.Command("git", "show", rev+":./"+file)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", nil, fmt.Errorf("read %s with git show %s:./%s: %s", name, rev, file, msg)
	}
	return name, stdout.Bytes(), nil
}
