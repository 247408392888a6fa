package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"
	"time"
)

// Columns are several metrics of one source over a run, one row per
// sample: Values[i][j] is metric Names[i] in sample TS[j], NaN when that
// sample lacks it.
type Columns struct {
	TS     []time.Time
	Names  []string
	Values [][]float64
}

// SeriesSet reads the metrics named of one source over a whole run in one
// pass, decoding each sample once and keeping only those metrics (a run of
// an hour at 1 Hz with a thousand metrics a sample stays small). A metric
// the run never recorded is all NaN.
func (s *Store) SeriesSet(ctx context.Context, runID int64, source string, metrics []string) (Columns, error) {
	c := Columns{Names: metrics, Values: make([][]float64, len(metrics))}
	ids := make([]int64, len(metrics))
	for i, m := range metrics {
		err := s.r.QueryRowContext(ctx, `SELECT id FROM metric_names WHERE name = ?`, m).Scan(&ids[i])
		if err == sql.ErrNoRows {
			ids[i] = -1
		} else if err != nil {
			return c, fmt.Errorf("read metrics of %s in run %d: %w", source, runID, err)
		}
	}
	err := s.scanSamples(ctx, runID, source, time.Time{}, time.Time{}, func(ts time.Time, d *frameDecoder) error {
		c.TS = append(c.TS, ts)
		for i, id := range ids {
			v := math.NaN()
			if id >= 0 {
				if x, ok := d.lookup(id); ok {
					v = x
				}
			}
			c.Values[i] = append(c.Values[i], v)
		}
		return nil
	})
	if err != nil {
		return c, fmt.Errorf("read metrics of %s in run %d: %w", source, runID, err)
	}
	return c, nil
}

// MetricNames returns the sorted names of the metrics one source of a run
// recorded, in any of its samples.
func (s *Store) MetricNames(ctx context.Context, runID int64, source string) ([]string, error) {
	seen := map[int64]bool{}
	err := s.scanSamples(ctx, runID, source, time.Time{}, time.Time{}, func(_ time.Time, d *frameDecoder) error {
		for _, id := range d.ids {
			seen[id] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list metrics of %s in run %d: %w", source, runID, err)
	}
	names := make([]string, 0, len(seen))
	for id := range seen {
		n, err := s.names.metric(ctx, s.r, id)
		if err != nil {
			return nil, fmt.Errorf("list metrics of %s in run %d: %w", source, runID, err)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}
