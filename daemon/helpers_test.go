package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"wtd/internal/testbin"
)

// startDaemon runs the daemon with config file cfg, minimongod as its
// server and a stand-in host, logging to a file. It returns the channel
// its signals go to, the channel its end arrives on and the log so far.
func startDaemon(t *testing.T, cfg string) (signals chan os.Signal, done <-chan error, logText func() string) {
	t.Helper()
	return startDaemonIn(t, cfg, t.TempDir())
}

// startDaemonIn is startDaemon with state as the state directory.
func startDaemonIn(t *testing.T, cfg, state string) (signals chan os.Signal, done <-chan error, logText func() string) {
	t.Helper()
	mm := testbin.Minimongod(t)
	wtd := testbin.Wtd(t) // built here: the daemon's goroutine must not call t.Fatal, nor wait for a build
	logs, err := os.Create(filepath.Join(t.TempDir(), "daemon.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	signals = make(chan os.Signal, 1)
	ended := make(chan error, 1)
	go func() {
		ended <- Run(context.Background(), Options{ConfigPath: cfg, StateDir: state,
			FindServer: func(string) (string, error) { return mm, nil }, Executable: wtd,
			Log: slog.New(slog.NewTextHandler(logs, nil))}, signals)
	}()
	return signals, ended, func() string { b, _ := os.ReadFile(logs.Name()); return string(b) }
}
