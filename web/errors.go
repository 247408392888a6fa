package web

import (
	"encoding/json"
	"net/http"
	"strings"
)

// writeJSON writes v as the response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// apiError is the body of every error: {"error": "..."} and, for some,
// more fields (a busy fire names the holder).
type apiError struct {
	Error  string `json:"error"`
	Holder string `json:"holder,omitempty"`
	RunID  int64  `json:"run_id,omitempty"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, apiError{Error: msg})
}

// jsonErrorWriter turns the plain-text errors net/http writes itself
// (405 Method Not Allowed, 404 of an unknown page) into JSON ones.
type jsonErrorWriter struct {
	http.ResponseWriter
	swallow bool
}

func (w *jsonErrorWriter) WriteHeader(code int) {
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.Header().Del("X-Content-Type-Options")
		msg := strings.ToLower(http.StatusText(code))
		if allow := w.Header().Get("Allow"); allow != "" {
			msg += " (allowed: " + allow + ")"
		}
		writeJSON(w.ResponseWriter, code, apiError{Error: msg})
		w.swallow = true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *jsonErrorWriter) Write(p []byte) (int, error) {
	if w.swallow {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection (an upload
// sets its own deadlines).
func (w *jsonErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush lets streaming handlers flush through the wrapper.
func (w *jsonErrorWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
