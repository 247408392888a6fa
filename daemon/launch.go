package daemon

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"wtd/engine"
	"wtd/engine/store"
	"wtd/runner"
	"wtd/schedule"
)

// readPlaybook reads and checks a schedule's playbook with its params.
func readPlaybook(ctx context.Context, s schedule.Schedule) (runner.Playbook, error) {
	return runner.ReadPlaybook(ctx, s.Playbook, s.Overrides)
}

// Bounds of a run's child process.
const (
	// killGrace is how long a child has between SIGTERM and SIGKILL; wtd
	// run ends within 10 s of SIGTERM whatever its playbook does.
	killGrace = 10 * time.Second
	// reportWithin bounds the wait for the child to record its run.
	reportWithin = 30 * time.Second
)

// launch carries out a run of job in a child process, `wtd run` of the
// same binary with the config in force, handing it the experiment lock
// job.Lock: it returns once the child has recorded the run. Aborting the
// run, its timeout and the daemon's stop write the reason to the child
// and send it SIGTERM, then SIGKILL after killGrace; a child that ended
// without recording its end (killed) gets it recorded here, aborted with
// the reason, after what it changed on servers is put back.
func (d *daemon) launch(ctx context.Context, job schedule.Job) (*schedule.Handle, error) {
	if _, err := readPlaybook(ctx, job.Schedule); err != nil {
		job.Lock.Release()
		return nil, err
	}
	bin, err := d.opts.FindServer(job.Config.Mongod)
	if err != nil {
		job.Lock.Release()
		return nil, err
	}
	c, err := d.startChild(job, bin)
	// The child holds the lock through its copy of the file (or it failed
	// to start and nobody does).
	job.Lock.HandOver()
	if err != nil {
		return nil, err
	}
	id, err := c.awaitRunID()
	if err != nil {
		return nil, err
	}
	abort := make(chan error, 1)
	done := make(chan schedule.RunEnd, 1)
	go func() { done <- d.watch(ctx, c, abort) }()
	return &schedule.Handle{RunID: id, Done: done, Abort: func(cause error) {
		select {
		case abort <- cause:
		default:
		}
	}}, nil
}

// child is a `wtd run` the daemon started.
type child struct {
	cmd    *exec.Cmd
	runID  int64
	ids    *os.File // the run id arrives here
	reason *os.File // the reason of a stop is written here
	exited chan struct{}
	events *lineLog
	out    *lineLog
	tail   *tailBuffer
	start  time.Time
}

// childArgs are the arguments of the child's wtd run; fds 3, 4 and 5 are
// the lock, the run id's pipe and the stop reason's pipe.
func (d *daemon) childArgs(job schedule.Job, bin string) []string {
	cfg := job.Config
	args := []string{"run", "--db", d.st.Path(), "--trigger", job.Trigger, "--sample-interval", cfg.SampleInterval.String(),
		"--lock-fd", "3", "--run-id-fd", "4", "--abort-fd", "5"}
	if bin != "" {
		args = append(args, "--mongod", bin)
	}
	if cfg.MaxMemory > 0 {
		args = append(args, "--max-memory", strconv.FormatInt(cfg.MaxMemory, 10))
	}
	for _, dir := range cfg.AllowDirs {
		args = append(args, "--allow-dir", dir)
	}
	for _, unit := range cfg.Services {
		args = append(args, "--allow-service", unit)
	}
	if cfg.AllowCommands {
		args = append(args, "--allow-commands")
	}
	names := make([]string, 0, len(job.Schedule.Overrides))
	for k := range job.Schedule.Overrides {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		args = append(args, "-p", k+"="+job.Schedule.Overrides[k])
	}
	return append(args, job.Schedule.Playbook)
}

// startChild starts the child with the lock and its two pipes.
func (d *daemon) startChild(job schedule.Job, bin string) (*child, error) {
	idsR, idsW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start wtd run: %w", err)
	}
	reasonR, reasonW, err := os.Pipe()
	if err != nil {
		idsR.Close()
		idsW.Close()
		return nil, fmt.Errorf("start wtd run: %w", err)
	}
	c := &child{ids: idsR, reason: reasonW, exited: make(chan struct{}), tail: &tailBuffer{max: 4096}, start: time.Now(),
		events: &lineLog{log: d.opts.Log, level: slog.LevelDebug, msg: "run event"},
		out:    &lineLog{log: d.opts.Log, level: slog.LevelInfo, msg: "playbook output"}}
	c.cmd = exec.Command(d.opts.Executable, d.childArgs(job, bin)...)
	c.cmd.Env = append(os.Environ(), "WTD_STATE_DIR="+d.opts.StateDir)
	c.cmd.Stdout, c.cmd.Stderr = c.out, io.MultiWriter(c.events, c.tail)
	c.cmd.ExtraFiles = []*os.File{job.Lock.File(), idsW, reasonR}
	// Its own process group: a Ctrl-C at the daemon's terminal reaches
	// the daemon, which stops the child with the reason; SIGTERM if the
	// daemon dies.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	c.cmd.WaitDelay = 2 * time.Second
	err = c.cmd.Start()
	idsW.Close()
	reasonR.Close()
	if err != nil {
		idsR.Close()
		reasonW.Close()
		return nil, fmt.Errorf("start wtd run %s: %w", d.opts.Executable, err)
	}
	go func() {
		c.cmd.Wait()
		c.events.flush()
		c.out.flush()
		close(c.exited)
	}()
	return c, nil
}

// awaitRunID reads the run's id from the child; a child that exits, or
// says nothing within reportWithin, recorded no run: its error is what it
// wrote last.
func (c *child) awaitRunID() (int64, error) {
	defer c.ids.Close()
	c.ids.SetReadDeadline(time.Now().Add(reportWithin))
	line, err := bufio.NewReader(c.ids).ReadString('\n')
	id, perr := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	if err == nil && perr == nil && id > 0 {
		c.runID = id
		c.events.setRun(id)
		c.out.setRun(id)
		return id, nil
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.cmd.Process.Kill()
	}
	<-c.exited
	c.reason.Close()
	why := strings.TrimSpace(c.tail.String())
	if why == "" {
		why = "no output"
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return 0, fmt.Errorf("wtd run recorded no run within %s (killed): %s", reportWithin, why)
	}
	return 0, fmt.Errorf("wtd run recorded no run (%s): %s", c.cmd.ProcessState, why)
}

// watch waits for the child to end, stopping it when ctx ends (timeout,
// daemon stop) or an abort comes, and returns how the run ended.
func (d *daemon) watch(ctx context.Context, c *child, abort <-chan error) schedule.RunEnd {
	defer c.reason.Close()
	var cause error
	select {
	case <-c.exited:
	case <-ctx.Done():
		cause = context.Cause(ctx)
	case cause = <-abort:
	}
	killed := false
	if cause != nil {
		killed = c.stop(d.opts.Log, cause)
	}
	return d.ended(c, cause, killed)
}

// stop writes the reason to the child, sends it SIGTERM and, if it has not
// exited after killGrace, SIGKILL; it returns once the child has exited,
// true when it had to be killed.
func (c *child) stop(log *slog.Logger, cause error) bool {
	fmt.Fprintf(c.reason, "%s\n", strings.ReplaceAll(cause.Error(), "\n", " "))
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		return false
	case <-time.After(killGrace):
	}
	log.Warn("wtd run did not end within the grace after SIGTERM: killing it", "run", c.runID, "pid", c.cmd.Process.Pid, "grace", killGrace.String())
	c.cmd.Process.Kill()
	<-c.exited
	return true
}

// ended is how the child's run ended, as it recorded it; a run it did not
// record the end of (killed, crashed) has what it changed put back and
// is recorded here: aborted with cause when the daemon stopped it, failed
// otherwise.
func (d *daemon) ended(c *child, cause error, killed bool) schedule.RunEnd {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	end := schedule.RunEnd{RunID: c.runID, Duration: time.Since(c.start)}
	// A run whose process is gone reads as aborted (store.Run): only an
	// end time says the child recorded the end.
	run, err := d.st.GetRun(ctx, c.runID)
	if err == nil && !run.EndedAt.IsZero() {
		end.Status, end.Reason = run.Status, run.Reason
		end.Started, end.Duration = run.StartedAt, run.EndedAt.Sub(run.StartedAt)
		return end
	}
	end.Status, end.Reason = store.StatusFailed, fmt.Sprintf("wtd run ended (%s) without recording the end of the run", c.cmd.ProcessState)
	switch {
	case killed:
		end.Status, end.Reason = store.StatusAborted, fmt.Sprintf("interrupted: %v; wtd run was killed, %s after SIGTERM", cause, killGrace)
	case cause != nil:
		end.Status, end.Reason = store.StatusAborted, fmt.Sprintf("interrupted: %v; wtd run ended (%s) without recording the end", cause, c.cmd.ProcessState)
	}
	log := &lineLog{log: d.opts.Log, level: slog.LevelWarn, msg: "restore", run: c.runID}
	if err := engine.RestoreRun(ctx, d.st, c.runID, log); err != nil {
		d.opts.Log.Error("putting back what the run changed on servers", "run", c.runID, "err", err)
	}
	log.flush()
	d.st.AddEvent(c.runID, time.Now(), "error", "run", "run "+end.Status+": "+end.Reason, nil)
	if err := d.st.FinishRun(ctx, c.runID, end.Status, end.Reason, time.Now()); err != nil {
		d.opts.Log.Error("record the end of the run", "run", c.runID, "err", err)
	}
	if err := d.st.Flush(ctx); err != nil {
		d.opts.Log.Error("record the end of the run", "run", c.runID, "err", err)
	}
	return end
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// lineLog writes each line written to it as a log record of the run, with
// URI passwords masked as in the results database.
type lineLog struct {
	log   *slog.Logger
	level slog.Level
	msg   string

	mu    sync.Mutex
	run   int64
	buf   bytes.Buffer
	table []string // the lines of a table being gathered
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
	l.endTable()
}

// emit logs one line, with URI passwords masked; l.mu is held.
// The lines of a table the playbook printed (report.table: from its top
// border to its bottom one) are logged as one entry, its line the whole
// table.
func (l *lineLog) emit(line string) {
	switch {
	case strings.HasPrefix(line, "┌"):
		l.endTable()
		l.table = append(l.table, line)
		return
	case len(l.table) > 0:
		l.table = append(l.table, line)
		if strings.HasPrefix(line, "└") || len(l.table) >= maxTableLines {
			l.endTable()
		}
		return
	case line == "":
		return
	}
	l.log.Log(context.Background(), l.level, l.msg, "run", l.run, "line", store.RedactURI(line))
}

// maxTableLines bounds the lines one log entry of a table holds.
const maxTableLines = 1000

// endTable logs the table being gathered, if any; l.mu is held.
func (l *lineLog) endTable() {
	if len(l.table) == 0 {
		return
	}
	text := strings.Join(l.table, "\n")
	l.table = l.table[:0]
	l.log.Log(context.Background(), l.level, l.msg, "run", l.run, "line", store.RedactURI(text))
}
