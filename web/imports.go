package web

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"wtd/engine/ftdcimport"
)

// DefaultMaxImportBytes caps the body of POST /api/v1/import: a mongod
// keeps at most 200 MB of diagnostic.data by default
// (diagnosticDataCollectionDirectorySizeMB).
const DefaultMaxImportBytes = 256 << 20

// importTime is how long an upload may take to be sent and imported.
const importTime = 10 * time.Minute

// serverName is what ?name= may be, as wtd import's --name.
var serverName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// fileName is what an uploaded file may be called: a base name, no path.
var fileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:+-]*$`)

// importFTDC is POST /api/v1/import: FTDC files in the body, one file as
// the whole body (named by ?file=, "upload" without) or several as the
// file parts of a multipart/form-data body (a diagnostic.data folder: its
// processes are split across files as wtd import splits them). ?name= is
// the server's name in the runs. The answer is what wtd import --json
// prints: 201 with the runs made, or 200 with [] when every file had been
// imported before.
func (s *Server) importFTDC(w http.ResponseWriter, r *http.Request) {
	if !s.importing.TryLock() {
		writeError(w, http.StatusConflict, "another import is under way: send this one when it is done")
		return
	}
	defer s.importing.Unlock()
	limit := s.opts.MaxImportBytes
	if limit <= 0 {
		limit = DefaultMaxImportBytes
	}
	size := fmt.Sprintf("%d bytes", limit)
	if limit >= 1<<20 {
		size = fmt.Sprintf("%d MiB", limit>>20)
	}
	tooLarge := "the upload is larger than this daemon takes (" + size + "): import larger folders on the host with wtd import"
	if r.ContentLength > limit {
		writeError(w, http.StatusRequestEntityTooLarge, tooLarge)
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(importTime))
	_ = rc.SetWriteDeadline(time.Now().Add(importTime))
	name := r.URL.Query().Get("name")
	if name == "" {
		name = "m1"
	}
	if !serverName.MatchString(name) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("name %q: want letters, digits, '.', '_' or '-'", name))
		return
	}
	dir, err := os.MkdirTemp("", "wtd-upload-")
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer os.RemoveAll(dir)
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	paths, status, err := saveUpload(r, dir)
	var big *http.MaxBytesError
	if errors.As(err, &big) {
		writeError(w, http.StatusRequestEntityTooLarge, tooLarge)
		return
	}
	if err != nil {
		writeError(w, status, err.Error())
		return
	}
	shown := func(p string) string { return strings.TrimPrefix(p, dir+string(filepath.Separator)) }
	for _, p := range paths {
		if err := ftdcimport.Check(p); err != nil {
			var nf *ftdcimport.NotFTDCError
			if errors.As(err, &nf) {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("%s is not an FTDC file (a metrics.* file of diagnostic.data): %s", shown(p), nf.Reason))
				return
			}
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	rep, err := ftdcimport.Import(r.Context(), s.opts.Store, paths, ftdcimport.Options{Name: name, Shown: shown})
	if err != nil {
		writeError(w, http.StatusInternalServerError, "import: "+strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), ""))
		return
	}
	out := rep.Runs
	if out == nil {
		out = []ftdcimport.Result{}
	}
	for i := range out {
		for k, sk := range out[i].Skipped {
			out[i].Skipped[k] = strings.ReplaceAll(sk, dir+string(filepath.Separator), "")
		}
	}
	for _, k := range rep.Known {
		s.opts.Log.Info("import: a file imported before, nothing new", "file", k.Path, "runs", k.Prev.Runs)
	}
	status = http.StatusOK
	if len(out) > 0 {
		status = http.StatusCreated
	}
	writeJSON(w, status, out)
}

// saveUpload writes the body's files into dir and returns their paths in
// the order mongod wrote them (metrics.<time>-<n> by name, then
// metrics.interim), or the status and error to answer.
func saveUpload(r *http.Request, dir string) ([]string, int, error) {
	var paths []string
	save := func(name string, body io.Reader) error {
		if !fileName.MatchString(name) || name == "." || name == ".." {
			return fmt.Errorf("file name %q: want a file's base name (letters, digits, '.', '_', ':', '+', '-')", name)
		}
		p := filepath.Join(dir, name)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("file %s is in the upload twice", name)
		}
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, body); err != nil {
			f.Close()
			return err
		}
		paths = append(paths, p)
		return f.Close()
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "multipart/form-data" {
		mr, err := r.MultipartReader()
		if err != nil {
			return nil, http.StatusBadRequest, fmt.Errorf("read the multipart body: %w", err)
		}
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, http.StatusBadRequest, fmt.Errorf("read the multipart body: %w", err)
			}
			if part.FileName() == "" {
				continue // a form field, not a file
			}
			if err := save(filepath.Base(part.FileName()), part); err != nil {
				return nil, http.StatusBadRequest, err
			}
		}
	} else {
		name := r.URL.Query().Get("file")
		if name == "" {
			name = "upload"
		}
		if err := save(name, r.Body); err != nil {
			return nil, http.StatusBadRequest, err
		}
		if fi, err := os.Stat(paths[0]); err == nil && fi.Size() == 0 {
			return nil, http.StatusBadRequest, errors.New("the body is empty: send an FTDC file (a metrics.* file of diagnostic.data), or several as multipart/form-data")
		}
	}
	if len(paths) == 0 {
		return nil, http.StatusBadRequest, errors.New("no file in the multipart body: send FTDC files (metrics.* of diagnostic.data) as its file parts")
	}
	sort.SliceStable(paths, func(i, j int) bool {
		ii, ji := filepath.Base(paths[i]) == "metrics.interim", filepath.Base(paths[j]) == "metrics.interim"
		if ii != ji {
			return ji
		}
		return paths[i] < paths[j]
	})
	return paths, 0, nil
}
