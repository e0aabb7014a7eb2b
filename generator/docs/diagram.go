package docs

import (
	"slices"
	"strings"

	"github.com/ordergen/ordergen/generator/ir"
)

// diagram is one entity's state diagram: what statediagram.tmpl renders.
type diagram struct {
	// Branches are the branch states, declared with a description.
	Branches []string
	// Edges are the transitions, in a stable order.
	Edges []edge
}

type edge struct {
	From  string
	To    string
	Label string
}

// start is Mermaid's start and end pseudo-state.
const start = "[*]"

// diagramOf returns e's state diagram, or nil when e has no states. The
// ranked states form a chain from the start to the end, each step labelled
// with the events that move to its state; each branch state has an edge
// from each state it may be entered from, and an edge to the end unless
// another branch may be entered from it. The events that happen within
// states (in:) are loops on those states.
func diagramOf(e *ir.Entity) *diagram {
	if len(e.States) == 0 {
		return nil
	}
	d := &diagram{}
	prev := start
	for _, s := range e.States {
		d.Edges = append(d.Edges, edge{prev, s, label(e, s)})
		prev = s
	}
	d.Edges = append(d.Edges, edge{prev, start, ""})
	for _, b := range e.Branches {
		d.Branches = append(d.Branches, b.Name)
		for _, from := range b.From {
			d.Edges = append(d.Edges, edge{from, b.Name, label(e, b.Name)})
		}
	}
	for _, b := range e.Branches {
		left := false
		for _, other := range e.Branches {
			left = left || slices.Contains(other.From, b.Name)
		}
		if !left {
			d.Edges = append(d.Edges, edge{b.Name, start, ""})
		}
	}
	for _, s := range e.StateNames() {
		if l := withinLabel(e, s); l != "" {
			d.Edges = append(d.Edges, edge{s, s, l})
		}
	}
	return d
}

// withinLabel names the events that happen within state (in:), joined by
// commas.
func withinLabel(e *ir.Entity, state string) string {
	var names []string
	for _, ev := range e.Events {
		if slices.Contains(ev.In, state) {
			names = append(names, ev.Name)
		}
	}
	return strings.Join(names, ", ")
}

// label names the events that move e to state, joined by commas.
func label(e *ir.Entity, state string) string {
	var names []string
	for _, ev := range e.Events {
		if ev.To == state {
			names = append(names, ev.Name)
		}
	}
	return strings.Join(names, ", ")
}
