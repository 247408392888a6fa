// Command minimongod is wtd's built-in target: a MongoDB-wire-compatible
// server on the real WiredTiger library. It takes mongod's flags and config
// file and answers with mongod's field names.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"wtd/minimongod/mlog"
	"wtd/minimongod/options"
	"wtd/minimongod/server"
	"wtd/minimongod/sysmon"
)

func main() {
	// First, before any other start-up work: it may start the process over.
	sysmonOff := sysmon.KeepAwake()
	os.Exit(run(os.Args, sysmonOff, os.Stdout, os.Stderr))
}

// run starts minimongod with argv; sysmonOff is why Go's scheduler monitor
// sleeps between requests, "" when it stays awake (package sysmon).
func run(argv []string, sysmonOff string, stdout, stderr io.Writer) int {
	total := totalRAM()
	opts, err := options.Parse(argv[1:], total)
	if err != nil {
		return reportOptionError(err, stdout, stderr)
	}
	if opts.Help {
		fmt.Fprint(stdout, options.Usage())
		return 0
	}
	if opts.Version {
		fmt.Fprintf(stdout, "db version v%s\nminimongod %s (MongoDB %s wire protocol, WiredTiger %s)\n",
			server.MongoVersion, server.Version, server.MongoVersion, server.WiredTigerVersion)
		return 0
	}
	log := mlog.New(stdout)
	if opts.LogPath != "" {
		l, err := mlog.Open(opts.LogPath, opts.LogAppend)
		if err != nil {
			fmt.Fprintf(stderr, "Failed to open log file %s: %v\n", opts.LogPath, err)
			return server.ExitUncaught
		}
		log = l
	}
	defer log.Close()
	log.Info("CONTROL", 4615611, "initandlisten", "MongoDB starting",
		mlog.A("pid", os.Getpid()), mlog.A("port", opts.Port), mlog.A("dbPath", opts.DBPath), mlog.A("architecture", "64-bit"))
	log.Info("CONTROL", 23403, "initandlisten", "Build Info", mlog.A("buildInfo", map[string]any{
		"version": server.MongoVersion, "minimongod": server.Version, "storageEngine": "WiredTiger " + server.WiredTigerVersion}))
	log.Info("CONTROL", 21951, "initandlisten", "Options set by command line", mlog.A("options", opts.Parsed))
	if sysmonOff == "" {
		log.Info("CONTROL", 4700101, "initandlisten", "Go's scheduler monitor stays awake between requests", mlog.A("GODEBUG", os.Getenv("GODEBUG")))
	} else {
		log.Info("CONTROL", 4700102, "initandlisten", "Go's scheduler monitor sleeps between requests", mlog.A("reason", sysmonOff))
	}

	if opts.Pprof != "" {
		profiles, err := startProfiles(opts.Pprof, log)
		if err != nil {
			log.Error("CONTROL", 20557, "initandlisten", "cannot listen for --pprof", mlog.A("error", err.Error()))
			fmt.Fprintln(stderr, err)
			return server.ExitBadOptions
		}
		defer func() {
			if err := profiles.Close(); err != nil {
				log.Error("CONTROL", 4700104, "SignalHandler", "cannot stop serving Go profiles", mlog.A("error", err.Error()))
			}
		}()
	}
	srv, err := server.New(opts, argv, log, total)
	if err != nil {
		log.Error("CONTROL", 20557, "initandlisten", "DBException in initAndListen, terminating", mlog.A("error", err.Error()))
		fmt.Fprintln(stderr, err)
		var ee *server.ExitError
		if errors.As(err, &ee) {
			return ee.Code
		}
		return server.ExitUncaught
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := srv.Serve(ctx); err != nil {
		log.Error("CONTROL", 20557, "SignalHandler", "shutdown failed", mlog.A("error", err.Error()))
		return server.ExitUncaught
	}
	return 0
}

// totalRAM returns the machine's memory in bytes (for the default cache).
func totalRAM() uint64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

// reportOptionError reports bad options as mongod does: parser errors on
// stderr, validation and startup errors as a log line (and on stderr, so a
// person starting it by hand sees them), with mongod's exit codes.
func reportOptionError(err error, stdout, stderr io.Writer) int {
	var ue *options.UsageError
	if !errors.As(err, &ue) {
		fmt.Fprintln(stderr, err)
		return server.ExitBadOptions
	}
	switch ue.Stage {
	case options.StageInit:
		mlog.New(stdout).Fatal("CONTROL", 20574, "main", "Error during global initialization", mlog.A("error", ue.LogAttr()))
	case options.StageStartup:
		mlog.New(stdout).Error("STORAGE", 20557, "initandlisten", "DBException in initAndListen, terminating", mlog.A("error", ue.LogAttr()))
	}
	fmt.Fprintln(stderr, ue.Msg)
	return ue.ExitCode()
}
