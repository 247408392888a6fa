package web

import (
	"html/template"
	"net/http"
)

// index is the page at /: the dashboard's place. Until the dashboard's
// pages are registered (Server.Handle), it lists the API.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	indexPage.Execute(w, nil)
}

var indexPage = template.Must(template.New("index").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>wtd</title></head>
<body>
<h1>wtd daemon</h1>
<ul>
<li><a href="/api/v1/schedules">/api/v1/schedules</a>: schedules and windows, next fire times, last runs, skips</li>
<li><a href="/api/v1/runs">/api/v1/runs</a>: runs (?playbook= &amp;status= &amp;limit=)</li>
<li>/api/v1/runs/ID, /api/v1/runs/ID/samples: a run, its steps and samples</li>
<li><a href="/metrics">/metrics</a>: Prometheus metrics</li>
<li><a href="/healthz">/healthz</a></li>
</ul>
</body></html>
`))
