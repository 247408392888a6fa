package web

import (
	"fmt"
	"net/http"
	"slices"
)

// SeriesReply is the body of GET /api/v1/runs/{id}/samples with a source
// and a metric: the sample times (unix seconds) and values as two arrays
// of equal length.
type SeriesReply struct {
	RunID  int64     `json:"run_id"`
	Source string    `json:"source"`
	Metric string    `json:"metric"`
	T      []float64 `json:"t"`
	V      []float64 `json:"v"`
}

// getSamples answers, by what the query names: no source, the run's
// sources; a source, its metric names; a source and a metric, the series.
func (s *Server) getSamples(w http.ResponseWriter, r *http.Request) {
	run, ok := s.runFromPath(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	source, metric := r.URL.Query().Get("source"), r.URL.Query().Get("metric")
	sources, err := s.opts.Store.SampleSources(ctx, run.ID)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if sources == nil {
		sources = []string{}
	}
	if source == "" {
		if metric != "" {
			writeError(w, http.StatusBadRequest, "metric= needs source= (one of the run's sources)")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"run_id": run.ID, "sources": sources})
		return
	}
	if !slices.Contains(sources, source) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("run %d has no samples from %q; its sources: %v", run.ID, source, sources))
		return
	}
	if metric == "" {
		names, err := s.opts.Store.MetricNames(ctx, run.ID, source)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		n, err := s.opts.Store.SourceSampleCount(ctx, run.ID, source)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"run_id": run.ID, "source": source, "samples": n, "metrics": names})
		return
	}
	pts, err := s.opts.Store.Series(ctx, run.ID, source, metric)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if len(pts) == 0 {
		writeError(w, http.StatusNotFound, fmt.Sprintf("run %d source %s has no metric %q", run.ID, source, metric))
		return
	}
	reply := SeriesReply{RunID: run.ID, Source: source, Metric: metric, T: make([]float64, len(pts)), V: make([]float64, len(pts))}
	for i, p := range pts {
		reply.T[i] = float64(p.TS.UnixNano()) / 1e9
		reply.V[i] = p.Value
	}
	writeJSON(w, http.StatusOK, reply)
}
