package ftdc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// DirConfig is what mongod's diagnosticDataCollection* parameters set for
// a diagnostic.data directory; zero fields take mongod's defaults.
type DirConfig struct {
	SamplesPerChunk         int   // diagnosticDataCollectionSamplesPerChunk: 300
	SamplesPerInterimUpdate int   // diagnosticDataCollectionSamplesPerInterimUpdate: 10
	MaxFileSizeBytes        int64 // diagnosticDataCollectionFileSizeMB: 10 MB
	MaxDirectorySizeBytes   int64 // diagnosticDataCollectionDirectorySizeMB: 200 MB

	// Metadata returns the type-0 document written at the start of every
	// archive file ({start, buildInfo, getCmdLineOpts, hostInfo, end}).
	Metadata func(at time.Time) (any, error)
}

func (c DirConfig) withDefaults() DirConfig {
	if c.SamplesPerChunk == 0 {
		c.SamplesPerChunk = DefaultSamplesPerChunk
	}
	if c.SamplesPerInterimUpdate == 0 {
		c.SamplesPerInterimUpdate = 10
	}
	if c.MaxFileSizeBytes == 0 {
		c.MaxFileSizeBytes = 10 << 20
	}
	if c.MaxDirectorySizeBytes == 0 {
		c.MaxDirectorySizeBytes = 200 << 20
	}
	return c
}

// Dir writes a diagnostic.data directory as mongod does: archive files
// metrics.<UTC time>-<n>, each starting with a metadata document; the open
// chunk in metrics.interim every SamplesPerInterimUpdate samples; a new
// archive file once one reaches MaxFileSizeBytes, the oldest removed while
// the directory holds more than MaxDirectorySizeBytes. An interim file left
// by a process before is written into the first archive file, after its
// metadata. A Dir is not safe for concurrent use.
type Dir struct {
	path    string
	cfg     DirConfig
	recover []byte // whole documents of the interim file found at open

	f       *os.File
	name    string
	w       *Writer
	counter countingWriter
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// OpenDir opens (creating it if needed) the diagnostic.data directory path.
func OpenDir(path string, cfg DirConfig) (*Dir, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("open diagnostic.data: %w", err)
	}
	d := &Dir{path: path, cfg: cfg.withDefaults()}
	if b, err := os.ReadFile(filepath.Join(path, "metrics.interim")); err == nil {
		d.recover = wholeDocuments(b)
	}
	return d, nil
}

// wholeDocuments returns the leading whole BSON documents of b.
func wholeDocuments(b []byte) []byte {
	at := 0
	for at+4 <= len(b) {
		n := int(int32(binary.LittleEndian.Uint32(b[at:])))
		if n < 5 || n > len(b)-at {
			break
		}
		at += n
	}
	return b[:at]
}

// SetConfig changes the configuration: chunk sizes from the next chunk,
// sizes at the next rotation.
func (d *Dir) SetConfig(cfg DirConfig) error {
	cfg = cfg.withDefaults()
	if cfg.SamplesPerChunk < 2 || cfg.SamplesPerInterimUpdate < 2 || cfg.MaxFileSizeBytes < 1 || cfg.MaxDirectorySizeBytes < cfg.MaxFileSizeBytes {
		return fmt.Errorf("diagnostic.data config %+v: samples per chunk and per interim update must be 2 or more, the directory no smaller than a file", cfg)
	}
	d.cfg = cfg
	if d.w != nil {
		return d.w.SetSamplesPerChunk(cfg.SamplesPerChunk)
	}
	return nil
}

// Add adds a sample taken at at.
func (d *Dir) Add(at time.Time, sample any) error {
	if d.f == nil {
		if err := d.openArchive(at); err != nil {
			return err
		}
	}
	if err := d.w.Add(at, sample); err != nil {
		return err
	}
	if n := d.w.Pending(); n > 0 && n%d.cfg.SamplesPerInterimUpdate == 0 {
		if err := d.w.WriteInterimFile(filepath.Join(d.path, "metrics.interim")); err != nil {
			return err
		}
	}
	if d.counter.n >= d.cfg.MaxFileSizeBytes {
		return d.rotate()
	}
	return nil
}

// ArchiveName returns the archive file being written, "" before the first
// sample.
func (d *Dir) ArchiveName() string { return d.name }

func (d *Dir) openArchive(at time.Time) error {
	base := "metrics." + at.UTC().Format("2006-01-02T15-04-05Z")
	var name string
	for i := 0; ; i++ {
		name = filepath.Join(d.path, fmt.Sprintf("%s-%05d", base, i))
		if _, err := os.Lstat(name); errors.Is(err, os.ErrNotExist) {
			break
		}
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("open FTDC archive: %w", err)
	}
	d.f, d.name = f, name
	d.counter = countingWriter{w: f}
	w := NewWriter(&d.counter)
	if err := w.SetSamplesPerChunk(d.cfg.SamplesPerChunk); err != nil {
		return err
	}
	d.w = w
	if d.cfg.Metadata != nil {
		doc, err := d.cfg.Metadata(at)
		if err != nil {
			return fmt.Errorf("FTDC metadata: %w", err)
		}
		if err := w.WriteMetadata(at, doc); err != nil {
			return err
		}
	}
	if len(d.recover) > 0 {
		if _, err := d.counter.Write(d.recover); err != nil {
			return fmt.Errorf("write FTDC archive: %w", err)
		}
		d.recover = nil
	}
	return nil
}

// rotate writes the open chunk, closes the archive file and removes the
// oldest archives while the directory is over its size.
func (d *Dir) rotate() error {
	if err := d.closeArchive(); err != nil {
		return err
	}
	return d.prune()
}

func (d *Dir) closeArchive() error {
	if d.f == nil {
		return nil
	}
	err := d.w.Flush()
	if cerr := d.f.Close(); err == nil {
		err = cerr
	}
	d.f = nil
	if err != nil {
		return fmt.Errorf("close FTDC archive %s: %w", d.name, err)
	}
	return nil
}

func (d *Dir) prune() error {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return fmt.Errorf("list diagnostic.data: %w", err)
	}
	type file struct {
		name string
		size int64
	}
	var archives []file
	var total int64
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() || !strings.HasPrefix(e.Name(), "metrics.") {
			continue
		}
		total += fi.Size()
		if !strings.HasPrefix(e.Name(), "metrics.interim") {
			archives = append(archives, file{e.Name(), fi.Size()})
		}
	}
	sort.Slice(archives, func(i, j int) bool { return archives[i].name < archives[j].name })
	for _, a := range archives {
		if total <= d.cfg.MaxDirectorySizeBytes {
			break
		}
		if err := os.Remove(filepath.Join(d.path, a.name)); err != nil {
			return fmt.Errorf("remove old FTDC archive: %w", err)
		}
		total -= a.size
	}
	return nil
}

// Close writes the open chunk into the archive and removes the interim
// file, which it would only repeat.
func (d *Dir) Close() error {
	if d.f == nil {
		return nil
	}
	if err := d.closeArchive(); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(d.path, "metrics.interim")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove FTDC interim: %w", err)
	}
	return nil
}
