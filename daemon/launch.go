package daemon

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"

	"wtd/engine"
	"wtd/engine/schedule"
	"wtd/runner"
)

// readPlaybook reads and checks a schedule's playbook with its params.
func readPlaybook(ctx context.Context, s schedule.Schedule) (runner.Playbook, error) {
	return runner.ReadPlaybook(ctx, s.Playbook, s.Overrides)
}

// launch carries out a run of job as `wtd run` does (runner), with the
// config in force: it returns once the run is recorded and plays it in the
// background.
func (d *daemon) launch(ctx context.Context, job schedule.Job) (*schedule.Handle, error) {
	cfg := job.Config
	pb, err := readPlaybook(ctx, job.Schedule)
	if err != nil {
		job.Lock.Release()
		return nil, err
	}
	bin, err := d.opts.FindServer(cfg.Mongod)
	if err != nil {
		job.Lock.Release()
		return nil, err
	}
	events := &lineLog{log: d.opts.Log, level: slog.LevelDebug, msg: "run event"}
	out := &lineLog{log: d.opts.Log, level: slog.LevelInfo, msg: "playbook output"}
	r, err := runner.Start(ctx, pb, job.Lock, engine.Config{Store: d.st, Host: d.opts.Host, MongodBinary: bin,
		WtdVersion: d.opts.WtdVersion, Trigger: job.Trigger, SampleInterval: cfg.SampleInterval, StateDir: d.opts.StateDir,
		AllowDirs: cfg.AllowDirs, AllowServices: cfg.Services, AllowCommands: cfg.AllowCommands, Log: events, Errors: events}, runner.Hooks{Out: out})
	if err != nil {
		return nil, err
	}
	events.setRun(r.ID)
	out.setRun(r.ID)
	done := make(chan schedule.RunEnd, 1)
	go func() {
		res := r.Play()
		events.flush()
		out.flush()
		done <- schedule.RunEnd{RunID: res.RunID, Status: res.Status, Reason: res.Reason, Duration: res.Duration}
	}()
	return &schedule.Handle{RunID: r.ID, Abort: r.Abort, Done: done}, nil
}

// lineLog writes each line written to it as a log record of the run.
type lineLog struct {
	log   *slog.Logger
	level slog.Level
	msg   string

	mu  sync.Mutex
	run int64
	buf bytes.Buffer
}

func (l *lineLog) setRun(id int64) {
	l.mu.Lock()
	l.run = id
	l.mu.Unlock()
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadString('\n')
		if err == io.EOF {
			l.buf.Reset()
			l.buf.WriteString(line) // keep the partial line
			return len(p), nil
		}
		l.emit(line[:len(line)-1])
	}
}

// flush logs a last line without its newline.
func (l *lineLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	sc := bufio.NewScanner(&l.buf)
	for sc.Scan() {
		l.emit(sc.Text())
	}
	l.buf.Reset()
}

// emit logs one line; l.mu is held.
func (l *lineLog) emit(line string) {
	if line == "" {
		return
	}
	l.log.Log(context.Background(), l.level, l.msg, "run", l.run, "line", line)
}
