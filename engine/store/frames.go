package store

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Frame is one samples row of a run as the database stores it: a block of
// samples (block.go) or one sample's frame (codec.go), in the store's own
// encoding. Metric ids in it are this database's (MetricIDs names them).
type Frame struct {
	Source   string
	TS       int64 // unix nanoseconds: the (first) sample's time
	Keyframe bool
	Samples  int // how many samples it holds
	Data     []byte
}

// Frames calls fn with each samples row of run id, source by source in
// time order, and returns the names of the metric ids they hold. fn must
// not keep f.Data past its return.
func (s *Store) Frames(ctx context.Context, runID int64, fn func(f Frame) error) (map[int64]string, error) {
	sources, err := s.SampleSources(ctx, runID)
	if err != nil {
		return nil, err
	}
	ids := map[int64]bool{}
	for _, src := range sources {
		if err := s.sourceFrames(ctx, runID, src, ids, fn); err != nil {
			return nil, fmt.Errorf("read frames of %s in run %d: %w", src, runID, err)
		}
	}
	names := make(map[int64]string, len(ids))
	for id := range ids {
		n, err := s.names.metric(ctx, s.r, id)
		if err != nil {
			return nil, fmt.Errorf("read frames of run %d: %w", runID, err)
		}
		names[id] = n
	}
	return names, nil
}

func (s *Store) sourceFrames(ctx context.Context, runID int64, source string, ids map[int64]bool, fn func(Frame) error) error {
	// Read in one snapshot, then hand out: fn may take its time (a
	// network write) without holding a read transaction open meanwhile.
	var frames []Frame
	rows, err := s.r.QueryContext(ctx, `SELECT ts, keyframe, frame FROM samples
		WHERE run_id = ? AND source_id = (SELECT id FROM sample_sources WHERE name = ?) ORDER BY ts`, runID, source)
	if err != nil {
		return err
	}
	var d frameDecoder
	for rows.Next() {
		f := Frame{Source: source}
		if err := rows.Scan(&f.TS, &f.Keyframe, &f.Data); err != nil {
			rows.Close()
			return err
		}
		if err := d.decode(f.Data); err != nil {
			rows.Close()
			return fmt.Errorf("sample at %d: %w", f.TS, err)
		}
		f.Samples = d.samples()
		if d.block {
			for _, id := range d.blk.ids {
				ids[id] = true
			}
		} else {
			for _, id := range d.ids {
				ids[id] = true
			}
		}
		frames = append(frames, f)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, f := range frames {
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// DecodeFrames decodes the frames of one source, given in time order as
// Frames gave them, into samples whose metrics are named by names (as
// Frames returned them): how a run's samples are read back from a copy of
// its frames kept elsewhere.
func DecodeFrames(frames []Frame, names map[int64]string) ([]Sample, error) {
	var out []Sample
	var d frameDecoder
	emit := func(ts int64) error {
		m := make(map[string]float64, len(d.ids))
		for k, id := range d.ids {
			n, ok := names[id]
			if !ok {
				return fmt.Errorf("decode frames: metric id %d: %w", id, ErrNotFound)
			}
			m[n] = d.vals[k]
		}
		out = append(out, Sample{TS: time.Unix(0, ts), Metrics: m})
		return nil
	}
	for _, f := range frames {
		if err := d.decode(f.Data); err != nil {
			return nil, fmt.Errorf("decode frames: sample at %d: %w", f.TS, err)
		}
		if !d.block {
			if err := emit(f.TS); err != nil {
				return nil, err
			}
			continue
		}
		offs := slices.Clone(d.blk.ts)
		for i, off := range offs {
			d.blockSample(i)
			if err := emit(f.TS + off); err != nil {
				return nil, err
			}
		}
		d.blockSample(d.blk.n - 1)
	}
	return out, nil
}
