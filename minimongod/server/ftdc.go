package server

import (
	"path/filepath"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/internal/ftdc"
	"wtd/minimongod/mlog"
)

// ftdcLoop is mongod's full-time diagnostic data capture: every
// diagnosticDataCollectionPeriodMillis, on the period's boundaries, a
// sample of serverStatus and systemMetrics goes into
// <dbpath>/diagnostic.data (see ftdc.Dir), each archive file starting with
// buildInfo, getCmdLineOpts and hostInfo. Turned off, it writes what it
// holds into the archive and waits to be turned on again.
func (s *Server) ftdcLoop() {
	defer s.bgDone.Done()
	sess, err := s.eng.NewSession()
	if err != nil {
		s.log.Error("FTDC", 20626, "ftdc", "cannot open a session for diagnostic data capture", mlog.A("error", err.Error()))
		return
	}
	defer sess.Close()
	c := &clientConn{s: s, sess: sess, name: "ftdc"}
	var dir *ftdc.Dir
	closeDir := func() {
		if dir != nil {
			if err := dir.Close(); err != nil {
				s.log.Warning("FTDC", 20627, "ftdc", "Error closing full-time diagnostic data capture", mlog.A("error", err.Error()))
			}
			dir = nil
		}
	}
	defer closeDir()
	failed := false
	for {
		_, period, _ := s.params.ftdcConfig()
		p := time.Duration(period) * time.Millisecond
		now := time.Now()
		wait := now.Truncate(p).Add(p).Sub(now)
		select {
		case <-s.bgStop:
			return
		case <-time.After(wait):
		}
		enabled, _, cfg := s.params.ftdcConfig()
		if !enabled {
			closeDir()
			continue
		}
		cfg.Metadata = func(at time.Time) (any, error) { return s.ftdcMetadata(c, at) }
		if dir == nil {
			if dir, err = ftdc.OpenDir(filepath.Join(s.opts.DBPath, "diagnostic.data"), cfg); err != nil {
				s.ftdcError(&failed, err)
				continue
			}
		} else if err := dir.SetConfig(cfg); err != nil {
			s.ftdcError(&failed, err)
		}
		start := time.Now()
		if err := dir.Add(start, s.ftdcSample(c, start)); err != nil {
			s.ftdcError(&failed, err)
			continue
		}
		failed = false
	}
}

// ftdcError logs err, once until capture works again.
func (s *Server) ftdcError(failed *bool, err error) {
	if !*failed {
		s.log.Warning("FTDC", 20628, "ftdc", "Error during full-time diagnostic data capture", mlog.A("error", err.Error()))
	}
	*failed = true
}

// ftdcSample is one sample: {start, serverStatus, systemMetrics, end}, each
// section between its own start and end, as mongod's collectors write it.
func (s *Server) ftdcSample(c *clientConn, start time.Time) []byte {
	d := appendDate(make([]byte, 4, 64<<10), "start", start)
	d = s.ftdcSection(d, "serverStatus", func(d []byte) []byte {
		req := &request{db: "admin", name: "serverStatus", body: bsoncore.NewDocumentBuilder().AppendInt32("serverStatus", 1).Build()}
		out, err := cmdServerStatus(c, req, d)
		if err != nil {
			return bsoncore.AppendStringElement(d, "errmsg", err.Error())
		}
		return out
	})
	d = s.ftdcSection(d, "systemMetrics", func(d []byte) []byte { return appendSystemMetrics(d, "/") })
	d = appendDate(d, "end", time.Now())
	return finishDocument(d)
}

// ftdcMetadata is the document at the start of each archive file.
func (s *Server) ftdcMetadata(c *clientConn, at time.Time) (any, error) {
	d := appendDate(make([]byte, 4, 16<<10), "start", at)
	for _, cmd := range []struct {
		name string
		run  func(*clientConn, *request, []byte) ([]byte, error)
	}{{"buildInfo", cmdBuildInfo}, {"getCmdLineOpts", cmdGetCmdLineOpts}, {"hostInfo", cmdHostInfo}} {
		var err error
		d = s.ftdcSection(d, cmd.name, func(d []byte) []byte {
			req := &request{db: "admin", name: cmd.name, body: bsoncore.NewDocumentBuilder().AppendInt32(cmd.name, 1).Build()}
			out, rerr := cmd.run(c, req, d)
			if rerr != nil {
				err = rerr
				return d
			}
			return out
		})
		if err != nil {
			return nil, err
		}
	}
	d = appendDate(d, "end", time.Now())
	return bsoncore.Document(finishDocument(d)), nil
}

// ftdcSection appends {start, what add appends, ok: 1, end} as key.
func (s *Server) ftdcSection(dst []byte, key string, add func([]byte) []byte) []byte {
	return subdoc(dst, key, func(d []byte) []byte {
		d = appendDate(d, "start", time.Now())
		d = add(d)
		if key != "systemMetrics" {
			d = bsoncore.AppendDoubleElement(d, "ok", 1)
		}
		return appendDate(d, "end", time.Now())
	})
}

// finishDocument ends the document d, begun with 4 bytes for its length.
func finishDocument(d []byte) []byte {
	d = append(d, 0)
	n := len(d)
	d[0], d[1], d[2], d[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
	return d
}
