package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"wtd/compare"
	"wtd/engine/record"
)

// showTunings lists the trials of each tune{} search, with their settings,
// objective and status, and the search's verdict.
func showTunings(w io.Writer, tunings []record.Tuning) {
	for _, tn := range tunings {
		measure := ""
		if len(tn.Trials) > 0 {
			measure = tn.Trials[0].Measure
		}
		unit := measure
		if _, u, err := compare.MeasureInfo(measure); err == nil && u != measure {
			unit = measure + " " + u
		}
		fmt.Fprintf(w, "\ntune search %d (%d trials)\n", tn.Search, len(tn.Trials))
		fmt.Fprintf(w, "  %-14s %4s  %-10s  %10s  %s\n", "trial", "step", "status", unit, "settings")
		for _, tr := range tn.Trials {
			step := record.Dash
			if tr.Step > 0 {
				step = strconv.Itoa(tr.Step)
			}
			fmt.Fprintf(w, "  %-14s %4s  %-10s  %10s  %s\n", tr.Name, step, tr.Status, compare.FormatValue(tr.Objective), termLine(settingsText(tr.Settings)))
			if tr.Reason != "" {
				fmt.Fprintf(w, "  %-14s %4s  %s\n", "", "", termLine(clip(tr.Reason, 100)))
			}
		}
		v := tn.Verdict
		if v == nil {
			fmt.Fprintf(w, "  verdict: %s (the search did not end)\n", record.Dash)
			continue
		}
		fmt.Fprintf(w, "  verdict: %s\n", termLine(v.Verdict))
		if v.Kept {
			fmt.Fprintf(w, "  kept on the server: %s\n", termLine(settingsText(v.Best)))
		}
	}
}

// settingsText words knob settings in name order: "a=1 b=2".
func settingsText(set map[string]float64) string {
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.FormatFloat(set[n], 'f', -1, 64)
	}
	return strings.Join(parts, " ")
}
