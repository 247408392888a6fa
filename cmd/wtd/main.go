// Command wtd runs MongoDB / WiredTiger tuning experiments written as Lua
// playbooks and records everything they measure in SQLite.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mattn/go-isatty"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := Env{
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Getenv:   os.Getenv,
		Terminal: isatty.IsTerminal(os.Stdout.Fd()),
	}
	os.Exit(run(ctx, os.Args[1:], env))
}
