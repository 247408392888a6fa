package report

import (
	"fmt"
	"math"
	"strings"

	"wtd/engine/record"
	"wtd/engine/store"
)

// maxMembers is the most members a replica set can have.
const maxMembers = 50

// memberPrefix is where an imported run keeps replSetGetStatus's members,
// by their index in its array (ftdcimport names them as FTDC does).
const memberPrefix = "replSetGetStatus.members."

// Member states of replSetGetStatus.
const (
	statePrimary   = 1
	stateSecondary = 2
)

func memberMetric(i int, field string) string { return fmt.Sprintf("%s%d.%s", memberPrefix, i, field) }

// memberMetrics are the fields of every member the replication chart
// reads.
func memberMetrics() []string {
	out := make([]string, 0, 3*maxMembers)
	for i := range maxMembers {
		out = append(out, memberMetric(i, "_id"), memberMetric(i, "state"), memberMetric(i, "optimeDate"))
	}
	return out
}

// replChart draws how far each secondary is behind the primary, in
// seconds, as the server's replSetGetStatus saw the members: the primary's
// optimeDate less the secondary's, in each sample that has a primary. A
// sample without a primary, or a member that is not a secondary then, is
// a gap.
func replChart(recs []*record.Record, cols []runColumns) Chart {
	c := Chart{ID: "repl", Title: "Replication lag", Unit: "s",
		Note: "each secondary's last applied operation (optimeDate) behind the primary's, as this server's replSetGetStatus saw them; " +
			"the members' optimes come from heartbeats, so a secondary can be seen a second ahead (below 0)"}
	for i, rec := range recs {
		for _, src := range rec.Sources {
			if !strings.HasPrefix(src, "server:") {
				continue
			}
			rd := RunData{Run: rec.Run.ID, Series: lagSeries(cols[i][src])}
			if len(rd.Series) == 0 {
				continue
			}
			for _, ts := range cols[i][src].TS {
				rd.X = append(rd.X, rel(rec, ts))
			}
			c.Runs = append(c.Runs, breakGaps(rd))
			break // one server per run: they share the x axis
		}
	}
	return c
}

// lagSeries is one line per member that is a secondary in some sample,
// labelled with its _id.
func lagSeries(cols store.Columns) []Series {
	n := len(cols.TS)
	state, optime := make([][]float64, maxMembers), make([][]float64, maxMembers)
	for m := range maxMembers {
		state[m], optime[m] = column(cols, memberMetric(m, "state")), column(cols, memberMetric(m, "optimeDate"))
	}
	primary := make([]int, n)
	for s := range n {
		primary[s] = -1
		for m := range maxMembers {
			if state[m] != nil && optime[m] != nil && state[m][s] == statePrimary && !math.IsNaN(optime[m][s]) {
				primary[s] = m
				break
			}
		}
	}
	var out []Series
	for m := range maxMembers {
		if state[m] == nil || optime[m] == nil {
			continue
		}
		y, any := make([]float64, n), false
		for s := range n {
			y[s] = math.NaN()
			if p := primary[s]; p >= 0 && state[m][s] == stateSecondary && !math.IsNaN(optime[m][s]) {
				y[s], any = (optime[p][s]-optime[m][s])/1000, true
			}
		}
		if any {
			out = append(out, Series{Label: "secondary " + memberID(cols, m), Y: y})
		}
	}
	return out
}

// memberID is the _id of the member at index m (its first value; a
// reconfiguration can move members), or its index when it has none.
func memberID(cols store.Columns, m int) string {
	for _, v := range column(cols, memberMetric(m, "_id")) {
		if !math.IsNaN(v) {
			return fmt.Sprintf("_id %d", int64(v))
		}
	}
	return fmt.Sprintf("member %d", m)
}
