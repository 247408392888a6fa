package server

import (
	"math"

	"wtd/internal/ftdc"
	"wtd/minimongod/mongoerr"
)

// ftdcParams are mongod's diagnosticDataCollection* parameters, with its
// defaults; the sizes are in MB.
type ftdcParams struct {
	enabled          bool
	periodMillis     int64
	directorySizeMB  int64
	fileSizeMB       int64
	samplesPerChunk  int64
	samplesPerUpdate int64
}

// registerFTDC registers the full-time diagnostic data capture parameters,
// settable at startup and at runtime, with mongod's bounds (gte in its
// IDL) and its check that a file is no larger than the directory.
func (p *params) registerFTDC() {
	f := &p.ftdc
	*f = ftdcParams{enabled: true, periodMillis: 1000, directorySizeMB: 200, fileSizeMB: 10, samplesPerChunk: 300, samplesPerUpdate: 10}
	p.register(p.boolParam("diagnosticDataCollectionEnabled", &f.enabled))
	for _, b := range []struct {
		name  string
		dst   *int64
		bound int64
	}{{"diagnosticDataCollectionPeriodMillis", &f.periodMillis, 100}, {"diagnosticDataCollectionSamplesPerChunk", &f.samplesPerChunk, 2},
		{"diagnosticDataCollectionSamplesPerInterimUpdate", &f.samplesPerUpdate, 2}} {
		p.register(p.intParamCheck(b.name, b.dst, func(n int64) error { return geCheck(b.name, n, b.bound) }))
	}
	// The other size is read under p.mu by the check, which intParamCheck
	// calls without it.
	p.register(p.intParamCheck("diagnosticDataCollectionDirectorySizeMB", &f.directorySizeMB, func(n int64) error {
		if err := geCheck("diagnosticDataCollectionDirectorySizeMB", n, 10); err != nil {
			return err
		}
		var file int64
		p.get(func() { file = f.fileSizeMB })
		if n < file {
			return mongoerr.New(mongoerr.CodeBadValue, "diagnosticDataCollectionDirectorySizeMB must be greater than or equal to '%d' which is the current value of diagnosticDataCollectionFileSizeMB.", file)
		}
		return nil
	}))
	p.register(p.intParamCheck("diagnosticDataCollectionFileSizeMB", &f.fileSizeMB, func(n int64) error {
		if err := geCheck("diagnosticDataCollectionFileSizeMB", n, 1); err != nil {
			return err
		}
		var dir int64
		p.get(func() { dir = f.directorySizeMB })
		if n > dir {
			return mongoerr.New(mongoerr.CodeBadValue, "diagnosticDataCollectionFileSizeMB must be less than or equal to '%d' which is the current value of diagnosticDataCollectionDirectorySizeMB.", dir)
		}
		return nil
	}))
}

// geCheck is mongod's IDL "gte" validator, with its message; the value is
// an int32 there.
func geCheck(name string, n, bound int64) error {
	if n > math.MaxInt32 {
		return mongoerr.New(mongoerr.CodeBadValue, "Invalid value for parameter %s: %d is out of range for an int", name, n)
	}
	if n < bound {
		return mongoerr.New(mongoerr.CodeBadValue, "Invalid value for parameter %s: %d is not greater than or equal to %d", name, n, bound)
	}
	return nil
}

// ftdcConfig returns whether capture is on, its period and the directory
// configuration the parameters set now.
func (p *params) ftdcConfig() (enabled bool, periodMillis int64, cfg ftdc.DirConfig) {
	p.get(func() {
		f := p.ftdc
		enabled, periodMillis = f.enabled, f.periodMillis
		cfg = ftdc.DirConfig{SamplesPerChunk: int(f.samplesPerChunk), SamplesPerInterimUpdate: int(f.samplesPerUpdate),
			MaxFileSizeBytes: f.fileSizeMB << 20, MaxDirectorySizeBytes: f.directorySizeMB << 20}
	})
	return
}
