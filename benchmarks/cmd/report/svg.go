package main

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// chart geometry, in SVG user units.
const (
	chartW      = 900.0
	chartH      = 470.0
	marginLeft  = 90.0
	marginRight = 150.0
	marginTop   = 56.0
	marginBot   = 56.0
)

// colorsFor returns a bar colour per peer: fixed ones for the known
// peers, and for others fallback colours in order.
func colorsFor(peers []string) []string {
	known := map[string]string{
		"ordergen":  "#1b6ac9",
		"generated": "#7fb3f0",
		"pool":      "#9aa0a6",
		"striped":   "#f29d38",
		"chained":   "#8e63c9",
		"watermill": "#2e9e6a",
	}
	fallback := []string{"#d64545", "#3bb3c3", "#c9b21b", "#6b4f3a"}
	colors := make([]string, len(peers))
	next := 0
	for i, p := range peers {
		if c, ok := known[p]; ok {
			colors[i] = c
			continue
		}
		colors[i] = fallback[next%len(fallback)]
		next++
	}
	return colors
}

// WriteSVG draws the dispatch figures as a grouped bar chart: one group
// per workload, one bar per peer, ns/event on a logarithmic axis.
func WriteSVG(w io.Writer, s Suite, f Figures) error {
	rows, cols := f.Axes(dispatchBench, s.Workloads, s.Peers)
	colors := colorsFor(cols)
	lo, hi := logRange(f, rows, cols)
	pw := chartW - marginLeft - marginRight
	ph := chartH - marginTop - marginBot
	y := func(v float64) float64 {
		return marginTop + ph - (math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*ph
	}

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif">`+"\n",
		chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<rect width="%.0f" height="%.0f" fill="#ffffff"/>`+"\n", chartW, chartH)
	fmt.Fprintf(&b, `<text x="%.1f" y="28" font-size="17" font-weight="bold">BenchmarkDispatch: ns per event, lower is better</text>`+"\n", marginLeft)

	// Grid and the y axis: a line and a label per decade, faint lines at
	// 2 and 5 times each decade.
	for d := lo; d <= hi*1.0001; d *= 10 {
		yy := y(d)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#cccccc"/>`+"\n", marginLeft, yy, marginLeft+pw, yy)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="end">%s</text>`+"\n", marginLeft-8, yy+4, group(int64(d)))
		for _, m := range []float64{2, 5} {
			if d*m < hi {
				ym := y(d * m)
				fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eeeeee" stroke-dasharray="4 3"/>`+"\n", marginLeft, ym, marginLeft+pw, ym)
			}
		}
	}
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333"/>`+"\n", marginLeft, marginTop, marginLeft, marginTop+ph)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333333"/>`+"\n", marginLeft, marginTop+ph, marginLeft+pw, marginTop+ph)
	fmt.Fprintf(&b, `<text transform="translate(24 %.1f) rotate(-90)" font-size="13" text-anchor="middle">ns/event (log scale)</text>`+"\n", marginTop+ph/2)

	// One group of bars per workload.
	if len(rows) > 0 && len(cols) > 0 {
		gw := pw / float64(len(rows))
		bw := gw * 0.8 / float64(len(cols))
		for i, r := range rows {
			gx := marginLeft + float64(i)*gw + gw*0.1
			for j, c := range cols {
				v, ok := f.Get(dispatchBench+"/"+r+"/"+c, "ns/op")
				if !ok || v <= 0 {
					continue
				}
				x := gx + float64(j)*bw
				top := y(v)
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s, %s: %s ns/event</title></rect>`+"\n",
					x+1, top, bw-2, marginTop+ph-top, colors[j], html.EscapeString(r), html.EscapeString(c), formatNs(v))
				fmt.Fprintf(&b, `<text transform="translate(%.1f %.1f) rotate(-90)" font-size="10">%s</text>`+"\n",
					x+bw/2+3.5, top-4, formatNs(v))
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="13" text-anchor="middle">%s</text>`+"\n",
				marginLeft+(float64(i)+0.5)*gw, marginTop+ph+22, html.EscapeString(r))
		}
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="13" text-anchor="middle">workload</text>`+"\n", marginLeft+pw/2, chartH-12)

	// Legend.
	lx := marginLeft + pw + 24
	for j, c := range cols {
		ly := marginTop + 10 + float64(j)*24
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="14" height="14" fill="%s"/>`+"\n", lx, ly, colors[j])
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="13">%s</text>`+"\n", lx+20, ly+12, html.EscapeString(c))
	}
	b.WriteString("</svg>\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write svg: %w", err)
	}
	return nil
}

// logRange returns the decades that bound the figures, with room above the
// highest bar for its label.
func logRange(f Figures, rows, cols []string) (lo, hi float64) {
	minV, maxV := math.Inf(1), 0.0
	for _, r := range rows {
		for _, c := range cols {
			if v, ok := f.Get(dispatchBench+"/"+r+"/"+c, "ns/op"); ok && v > 0 {
				minV = math.Min(minV, v)
				maxV = math.Max(maxV, v)
			}
		}
	}
	if maxV == 0 {
		return 1, 10
	}
	lo = math.Pow(10, math.Floor(math.Log10(minV)))
	hi = math.Pow(10, math.Ceil(math.Log10(maxV*3)))
	return lo, hi
}
