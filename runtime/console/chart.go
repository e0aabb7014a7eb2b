package console

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// The charts are SVG drawn on the server, inside the page: the
// Content-Security-Policy allows no script, and needs none for them. Their
// colours come from the stylesheet (classes, no style attributes).

// series is one quantity the charts draw from a subscriber's samples.
type series struct {
	name  string // what the caption says
	class string // the stylesheet's class for its colour
	// rate marks a counter, drawn as its change per second between two
	// samples; the others are drawn as they are.
	rate   bool
	value  func(sample) float64
	format func(float64) string
	// live marks a quantity that only a subscriber running in this process
	// has (a store's view has only parks).
	live bool
}

var allSeries = []series{
	{name: "handled/s", class: "handled", rate: true, live: true, value: func(s sample) float64 { return float64(s.handled) }, format: perSecond},
	{name: "failed/s", class: "failed", rate: true, live: true, value: func(s sample) float64 { return float64(s.failed) }, format: perSecond},
	{name: "backlog", class: "backlog", live: true, value: func(s sample) float64 { return float64(s.pending) }, format: count},
	{name: "oldest", class: "oldest", live: true, value: func(s sample) float64 { return time.Duration(s.oldest).Seconds() }, format: ageOf},
	{name: "parked", class: "parked", value: func(s sample) float64 { return float64(s.parked) }, format: count},
}

func perSecond(v float64) string {
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 1, 64) + "/s"
	}
	return num(int64(math.Round(v))) + "/s"
}

func count(v float64) string { return num(int64(math.Round(v))) }

func ageOf(v float64) string { return age(time.Duration(v * float64(time.Second))) }

// point is one value of a series at a time.
type point struct {
	at int64 // Unix nanoseconds
	v  float64
	// gap marks a point the line does not join to the one before: a sample
	// is missing between them, or a counter went back (a new engine).
	gap bool
}

// pointsOf returns s's points over samples taken every interval.
func (s series) pointsOf(samples []sample, every time.Duration) []point {
	var out []point
	tooLong := int64(every) * 5 / 2
	for i, sm := range samples {
		gap := i == 0 || sm.at-samples[i-1].at > tooLong
		if !s.rate {
			out = append(out, point{at: sm.at, v: max(s.value(sm), 0), gap: gap})
			continue
		}
		if i == 0 {
			continue
		}
		prev := samples[i-1]
		d, dt := s.value(sm)-s.value(prev), time.Duration(sm.at-prev.at).Seconds()
		if d < 0 || dt <= 0 || sm.at-prev.at > tooLong {
			continue // no rate across a gap or a reset; the next point starts anew
		}
		gap = len(out) == 0 || out[len(out)-1].at != prev.at
		out = append(out, point{at: sm.at, v: d / dt, gap: gap})
	}
	return out
}

// chartView is a drawn chart, for the templates.
type chartView struct {
	Name, Class string
	// Now is the latest value, Top the value at the top of the chart, Span
	// how far back its left edge is ("1h", "4m10s").
	Now, Top, Span string
	// W and H are the drawing's size in its own units (the stylesheet
	// scales it); Line and Area are its paths; DotX and DotY place the mark
	// of the latest point (Dot: there is one).
	W, H       int
	Line, Area string
	Dot        bool
	DotX, DotY string
	// Points is how many points it draws.
	Points int
	// Label describes it for people who do not see it.
	Label string
}

// chartSize is the size of a small chart (overview) and of a large one
// (a subscriber's page).
var (
	smallChart = [2]int{200, 44}
	largeChart = [2]int{720, 150}
)

// draw draws s over samples, up to now, at size.
func (s series) draw(samples []sample, every time.Duration, now time.Time, size [2]int) chartView {
	w, h := size[0], size[1]
	pts := s.pointsOf(samples, every)
	to := now.UnixNano()
	span := historySpan
	if len(samples) > 0 {
		// A young history fills the chart, rather than a sliver at its right.
		span = min(historySpan, max(time.Duration(to-samples[0].at), 10*every))
	}
	from := to - int64(span)
	top := 0.0
	for _, p := range pts {
		top = max(top, p.v)
	}
	top = niceCeil(top)
	cv := chartView{Name: s.name, Class: s.class, W: w, H: h, Points: len(pts), Top: s.format(top), Span: age(span.Round(time.Second)), Now: "–"}
	if span < time.Second {
		cv.Span = age(span)
	}
	const pad = 2.0
	x := func(at int64) float64 {
		return math.Max(0, float64(at-from)/float64(to-from)*float64(w))
	}
	y := func(v float64) float64 { return float64(h) - pad - v/top*(float64(h)-2*pad) }
	// Points closer than a unit of the drawing merge into one, the
	// largest: an hour of samples in a small chart draws a point per unit.
	type drawn struct {
		x, v float64
		gap  bool
	}
	var ds []drawn
	for _, p := range pts {
		px := x(p.at)
		if n := len(ds); n > 0 && !p.gap && math.Floor(px) == math.Floor(ds[n-1].x) {
			ds[n-1].v = max(ds[n-1].v, p.v)
			continue
		}
		ds = append(ds, drawn{px, p.v, p.gap || len(ds) == 0})
	}
	var line, area strings.Builder
	bottom := f1(float64(h))
	for i, d := range ds {
		px, py := f1(d.x), f1(y(d.v))
		if d.gap {
			line.WriteString(" M" + px + " " + py)
			area.WriteString(" M" + px + " " + bottom + " L" + px + " " + py)
		} else {
			line.WriteString(" L" + px + " " + py)
			area.WriteString(" L" + px + " " + py)
		}
		if i == len(ds)-1 || ds[i+1].gap {
			// The area of a run of points closes down to the bottom.
			area.WriteString(" L" + px + " " + bottom + " Z")
		}
	}
	cv.Line, cv.Area = strings.TrimSpace(line.String()), strings.TrimSpace(area.String())
	if n := len(ds); n > 0 {
		cv.Now = s.format(pts[len(pts)-1].v)
		cv.Dot, cv.DotX, cv.DotY = true, f1(ds[n-1].x), f1(y(pts[len(pts)-1].v))
	}
	cv.Label = s.name + " over the last " + cv.Span + ": now " + cv.Now + ", at most " + cv.Top
	return cv
}

// f1 writes v with one decimal, as the paths want.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (1 for zero), so
// that the top of a chart reads as a round number.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// charts draws the charts of a subscriber's samples: every series for a
// live subscriber, the parks alone for a store's view.
func (c *Console) charts(id subscriberID, live bool, size [2]int) []chartView {
	if c.history == nil {
		return nil
	}
	samples := c.history.of(id)
	if len(samples) == 0 {
		return nil
	}
	now := time.Now()
	var out []chartView
	for _, s := range allSeries {
		if s.live && !live {
			continue
		}
		out = append(out, s.draw(samples, c.history.every, now, size))
	}
	return out
}
