package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"wtd/engine"
	"wtd/hostctl"
)

// hardStop is how long wtd run may take after SIGINT or SIGTERM: the run
// is stopped at once, a playbook stuck in a Go call is left behind after
// runner.DefaultGrace, the end is recorded and the servers stopped; past
// hardStop the process exits anyway (the servers die with it, and what the
// run changed on servers it did not start is put back by the next wtd
// command that opens the database, or by the daemon that started it).
const hardStop = 9500 * time.Millisecond

// defaultMaxMemory is --max-memory's default, unless a quarter of the
// host's memory is less.
const defaultMaxMemory = 2 << 30

// maxMemory is the run's memory limit: flag (checked already), else the
// default.
func maxMemory(flag string, host *hostctl.Host) int64 {
	if flag != "" {
		n, _ := engine.ParseBytes(flag)
		return n
	}
	limit := int64(defaultMaxMemory)
	if m, err := host.Meminfo(); err == nil && m.MemTotal > 0 {
		limit = min(limit, int64(m.MemTotal/4))
	}
	return limit
}

// exitAfterSignal makes the process exit with status 130 once hardStop
// has passed since ctx ended (a signal), whatever the run is doing; the
// returned func disarms it.
func exitAfterSignal(ctx context.Context, env Env, within time.Duration) (disarm func()) {
	var timer *time.Timer
	armed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		timer = time.AfterFunc(within, func() {
			fmt.Fprintf(env.Stderr, "wtd: the run did not end within %s of %s: exiting; what it changed on servers is put back by the next wtd command\n",
				within, context.Cause(ctx))
			os.Exit(exitInterrupted)
		})
		close(armed)
	})
	return func() {
		if !stop() {
			<-armed
			timer.Stop()
		}
	}
}

// stopCause is why the run is stopped once ctx ended: the line the daemon
// wrote to abortFD before its SIGTERM (abortFD >= 0), else the signal.
func stopCause(ctx context.Context, abortFD int) error {
	cause := context.Cause(ctx)
	if abortFD < 0 {
		return cause
	}
	f := os.NewFile(uintptr(abortFD), "abort")
	// The daemon writes before it signals: the line is there already.
	f.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	line, _ := bufio.NewReader(f).ReadString('\n')
	if line = strings.TrimSpace(line); line != "" {
		return errors.New(line)
	}
	return cause
}

// tellRunID writes the run's id to fd for the daemon and closes it.
func tellRunID(fd int, id int64) {
	f := os.NewFile(uintptr(fd), "run-id")
	fmt.Fprintf(f, "%d\n", id)
	f.Close()
}

// runLock is the experiment lock for the run: the one the daemon handed
// over (--lock-fd), else taken as takeLock does.
func runLock(ctx context.Context, env Env, state string, holder hostctl.LockHolder, f runFlags) (*hostctl.ExperimentLock, error) {
	if f.child.lockFD < 0 {
		return takeLock(ctx, env, state, holder, f.noWait)
	}
	l, err := hostctl.InheritLock(os.NewFile(uintptr(f.child.lockFD), hostctl.LockPath(state)), holder)
	if err != nil {
		return nil, &exitError{code: exitBusy, err: err}
	}
	return l, nil
}
