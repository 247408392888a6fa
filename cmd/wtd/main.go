// Command wtd runs MongoDB / WiredTiger tuning experiments written as Lua
// playbooks and records everything they measure in SQLite.
package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	// The first SIGINT or SIGTERM cancels the command with the signal as
	// the cause ("interrupted: terminated" is how a run records it).
	go func() { cancel(errors.New((<-signals).String())) }()
	env := Env{
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Getenv:   os.Getenv,
		Terminal: barsFit(os.Stdout),
	}
	code := run(ctx, os.Args[1:], env)
	signal.Stop(signals)
	os.Exit(code)
}
