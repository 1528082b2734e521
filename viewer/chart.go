package viewer

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// palette colours the ops of a chart.
var palette = []string{"#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777"}

// Chart geometry, in SVG user units.
const (
	chartW   = 480
	chartH   = 140
	chartPad = 28
)

type line struct {
	Name   string
	Color  string
	Points []float64
}

// chart is a small line chart drawn as inline SVG: its polylines' points
// are computed here, so the template only places numbers.
type chart struct {
	Title  string
	W, H   int
	Max    string
	Lines  []chartLine
	Labels []chartLabel
	Empty  bool
}

type chartLine struct {
	Name, Color, Points string
}

type chartLabel struct {
	X    int
	Text string
}

// drawChart lays lines (one value per hour from since) out in a chart.
func drawChart(title string, since time.Time, lines []line) chart {
	c := chart{Title: title, W: chartW, H: chartH, Empty: len(lines) == 0}
	top := 0.0
	n := 0
	for _, l := range lines {
		n = max(n, len(l.Points))
		for _, p := range l.Points {
			top = max(top, p)
		}
	}
	if top == 0 {
		top = 1
	}
	c.Max = strconv.FormatFloat(top, 'f', -1, 64)
	plotW, plotH := float64(chartW-2*chartPad), float64(chartH-2*chartPad)
	x := func(i int) float64 {
		if n <= 1 {
			return chartPad
		}
		return chartPad + plotW*float64(i)/float64(n-1)
	}
	for _, l := range lines {
		var b strings.Builder
		for i, p := range l.Points {
			fmt.Fprintf(&b, "%.1f,%.1f ", x(i), chartPad+plotH*(1-p/top))
		}
		c.Lines = append(c.Lines, chartLine{Name: l.Name, Color: l.Color, Points: strings.TrimSpace(b.String())})
	}
	for i := 0; i < n; i += 6 {
		c.Labels = append(c.Labels, chartLabel{X: int(x(i)), Text: since.Add(time.Duration(i) * time.Hour).UTC().Format("15:04")})
	}
	return c
}
