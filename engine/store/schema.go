package store

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are the schema, one step per entry; entry i brings the database
// from user_version i to i+1. Append only: never edit a released entry.
//
// Times are INTEGER unix nanoseconds (NULL while a run or step is going on,
// and when its end was not seen: its wtd was killed);
// structured values are JSON text (NULL when not given).
var migrations = []string{
	`
CREATE TABLE runs (
	id              INTEGER PRIMARY KEY,
	playbook_path   TEXT    NOT NULL,
	playbook        TEXT    NOT NULL,            -- content, URI passwords masked
	playbook_sha256 TEXT    NOT NULL,            -- of the content as read
	params          TEXT,                        -- JSON object
	started_at      INTEGER NOT NULL,
	ended_at        INTEGER,
	status          TEXT    NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'aborted')),
	reason          TEXT    NOT NULL DEFAULT '',
	host_facts      TEXT,                        -- JSON: cores, memory, kernel, virtualisation, disk
	target_path     TEXT    NOT NULL DEFAULT '',
	target_uri      TEXT    NOT NULL DEFAULT '',  -- password masked
	target_version  TEXT    NOT NULL DEFAULT '',
	wtd_version     TEXT    NOT NULL DEFAULT '',
	owner_pid       INTEGER NOT NULL,            -- the wtd process writing the run
	owner_host      TEXT    NOT NULL,
	owner_boot_id   TEXT    NOT NULL DEFAULT ''  -- the owner host's boot, to see past pid reuse
);
CREATE INDEX runs_by_start ON runs (started_at);

CREATE TABLE steps (
	id         INTEGER PRIMARY KEY,
	run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,                 -- 1, 2, ... within the run
	name       TEXT    NOT NULL,
	labels     TEXT,                             -- JSON object, e.g. round, cacheSizeGB
	started_at INTEGER NOT NULL,
	ended_at   INTEGER,
	status     TEXT    NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'aborted')),
	error      TEXT    NOT NULL DEFAULT '',
	settings   TEXT,                             -- JSON: mongod settings in force
	provenance TEXT,                             -- JSON: cache-state provenance
	results    TEXT,                             -- JSON: per op type results, server deltas
	UNIQUE (run_id, seq)
);

CREATE TABLE metric_names (
	id   INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE
);

CREATE TABLE sample_sources (
	id   INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE                    -- "host", "server:m1", ...
);

-- One row per sample of one source; frame is the codec's encoding (codec.go),
-- a delta against the previous row of the same (run_id, source_id) unless
-- keyframe is 1.
CREATE TABLE samples (
	run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	source_id INTEGER NOT NULL REFERENCES sample_sources (id),
	ts        INTEGER NOT NULL,
	keyframe  INTEGER NOT NULL,
	frame     BLOB    NOT NULL,
	PRIMARY KEY (run_id, source_id, ts)
) WITHOUT ROWID;

CREATE TABLE events (
	id      INTEGER PRIMARY KEY,
	run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	ts      INTEGER NOT NULL,
	level   TEXT    NOT NULL,
	source  TEXT    NOT NULL DEFAULT '',
	message TEXT    NOT NULL,
	attrs   TEXT                                 -- JSON object
);
CREATE INDEX events_by_run ON events (run_id, ts);
`,
	// 2: what triggered a run, each server a run used, and the files a
	// playbook wrote.
	`
ALTER TABLE runs ADD COLUMN triggered_by TEXT NOT NULL DEFAULT 'cli';  -- cli, api, schedule NAME, catch-up

CREATE TABLE servers (
	run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	name        TEXT    NOT NULL,                -- m1, m2, ... as the playbook's handles
	started     INTEGER NOT NULL,                -- 1: wtd started the process; 0: attached to a running one
	uri         TEXT    NOT NULL DEFAULT '',     -- password masked
	binary      TEXT    NOT NULL DEFAULT '',     -- the binary wtd started ('' when attached)
	version     TEXT    NOT NULL DEFAULT '',     -- buildInfo.version
	git_version TEXT    NOT NULL DEFAULT '',     -- buildInfo.gitVersion
	pid         INTEGER,                         -- NULL when not known (attached)
	added_at    INTEGER NOT NULL,
	PRIMARY KEY (run_id, name)
) WITHOUT ROWID;

CREATE TABLE artifacts (
	run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	path    TEXT    NOT NULL,                    -- relative to the run directory
	size    INTEGER NOT NULL,
	content BLOB,                                -- NULL when too large to keep (note says where it is)
	note    TEXT    NOT NULL DEFAULT '',
	PRIMARY KEY (run_id, path)
) WITHOUT ROWID;
`,
	// 3: the daemon's history: schedules firing, skipping and ending runs,
	// windows opening and closing (with the values before and after), the
	// daemon starting, reloading and stopping.
	`
CREATE TABLE schedule_events (
	id     INTEGER PRIMARY KEY,
	ts     INTEGER NOT NULL,
	kind   TEXT    NOT NULL CHECK (kind IN ('schedule', 'window', 'daemon')),
	name   TEXT    NOT NULL DEFAULT '',          -- the schedule's or window's name
	event  TEXT    NOT NULL,                     -- fire, skip, end; open, close, open-failed, close-failed; start, reload, stop
	run_id INTEGER REFERENCES runs (id) ON DELETE SET NULL,
	detail TEXT    NOT NULL DEFAULT '',          -- why, in words (a skip's holder, a failure's error)
	attrs  TEXT                                  -- JSON: a run's status and trigger, a window's values before and after
);
CREATE INDEX schedule_events_by_name ON schedule_events (kind, name, ts);
`,
	// 4: what a run changed on a server it did not start afresh (a service's
	// config file, runtime parameters of an attached or managed server), saved
	// before the change, and whether it was put back.
	`
CREATE TABLE changes (
	id          INTEGER PRIMARY KEY,
	run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	server      TEXT    NOT NULL,                -- m1, m2, ...
	kind        TEXT    NOT NULL CHECK (kind IN ('config', 'parameter')),
	target      TEXT    NOT NULL,                -- the config file's path, or the parameter's name
	before      TEXT,                            -- JSON: the parameter's value before the change
	original    BLOB,                            -- config: the file's bytes before the run's first change
	change      TEXT,                            -- JSON: what was set
	restore     TEXT,                            -- JSON: how to put it back (URI, unit, service manager, mode, owner)
	keep        INTEGER NOT NULL DEFAULT 0,      -- 1: the playbook asked to keep it (keep = true)
	state       TEXT    NOT NULL CHECK (state IN ('pending', 'restored', 'kept')),
	made_at     INTEGER NOT NULL,
	restored_at INTEGER,
	detail      TEXT    NOT NULL DEFAULT ''      -- the last restore attempt, in words
);
CREATE INDEX changes_by_state ON changes (state, run_id);
`,
	// 5: what a run's deletion and its pages look up by run: its schedule
	// events and its changes.
	`
CREATE INDEX schedule_events_by_run ON schedule_events (run_id);
CREATE INDEX changes_by_run ON changes (run_id, state);
`,
	// 6: two more kinds of change: an index m:create_index made on a server
	// wtd did not start (dropped at the end), and a command the operator
	// allowed m:command to run there, which cannot be put back (state
	// irreversible). SQLite cannot alter a CHECK: the table is made anew.
	`
CREATE TABLE changes_v6 (
	id          INTEGER PRIMARY KEY,
	run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	server      TEXT    NOT NULL,                -- m1, m2, ...
	kind        TEXT    NOT NULL CHECK (kind IN ('config', 'parameter', 'index', 'command')),
	target      TEXT    NOT NULL,                -- the config file, the parameter, the index's db.collection, the command's name
	before      TEXT,                            -- JSON: the parameter's value before the change
	original    BLOB,                            -- config: the file's bytes before the run's first change
	change      TEXT,                            -- JSON: what was set, the index made, the command run
	restore     TEXT,                            -- JSON: how to put it back (URI, unit, service manager, mode, owner)
	keep        INTEGER NOT NULL DEFAULT 0,      -- 1: the playbook asked to keep it (keep = true)
	state       TEXT    NOT NULL CHECK (state IN ('pending', 'restored', 'kept', 'irreversible')),
	made_at     INTEGER NOT NULL,
	restored_at INTEGER,
	detail      TEXT    NOT NULL DEFAULT ''      -- the last restore attempt, in words
);
INSERT INTO changes_v6 (id, run_id, server, kind, target, before, original, change, restore, keep, state, made_at, restored_at, detail)
	SELECT id, run_id, server, kind, target, before, original, change, restore, keep, state, made_at, restored_at, detail FROM changes;
DROP TABLE changes;
ALTER TABLE changes_v6 RENAME TO changes;
CREATE INDEX changes_by_state ON changes (state, run_id);
CREATE INDEX changes_by_run ON changes (run_id, state);
`,
	// 7: the owner of a run beyond its pid (pids are reused, and mean a
	// process only in their pid namespace) and the experiment lock it holds
	// while the run goes on: a run whose lock is free is not going on.
	`
ALTER TABLE runs ADD COLUMN owner_start_ticks INTEGER;               -- the owner's start, clock ticks after boot (/proc/PID/stat field 22); NULL unknown
ALTER TABLE runs ADD COLUMN owner_pid_ns TEXT NOT NULL DEFAULT '';   -- the owner's pid namespace, "pid:[4026531836]"; '' unknown
ALTER TABLE runs ADD COLUMN owner_lock TEXT NOT NULL DEFAULT '';     -- the experiment lock file it holds; '' not recorded (older wtd)
ALTER TABLE runs ADD COLUMN owner_lock_file TEXT NOT NULL DEFAULT ''; -- that file's "device:inode", to know it again from another mount namespace
CREATE INDEX runs_running ON runs (id) WHERE status = 'running';
`,
	// 8: the thresholds a playbook declared (threshold{}) and how each
	// held at the run's end.
	`
CREATE TABLE thresholds (
	run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,                -- 1, 2, ... in the order declared
	spec         TEXT    NOT NULL,                -- JSON: step, measure, max / min / vs_baseline
	unit         TEXT    NOT NULL DEFAULT '',     -- the measure as compare names it, with its unit ("p99 ms")
	value        REAL,                            -- the run's value; NULL not measured
	baseline_run INTEGER,                         -- vs_baseline: the run compared with; NULL none
	baseline     REAL,                            -- that run's value; NULL not measured or no baseline
	lim          REAL,                            -- the bound the value was held to; NULL none
	state        TEXT    NOT NULL CHECK (state IN ('passed', 'failed', 'no baseline')),
	reason       TEXT    NOT NULL DEFAULT '',     -- in words
	PRIMARY KEY (run_id, seq)
);
`,
	// 9: the FTDC files wtd import read, by their content, so that a file
	// imported again makes nothing new: sha256 (hex) of the file's bytes,
	// the path it was read from, its size, when, and runs: a JSON array
	// of the runs its samples went into. (No SQL comments here: with
	// them, the database cmd/wtd's TestDamagedDatabaseIsCheckedFirst
	// damages fails to open rather than failing its check.)
	`
CREATE TABLE imported_files (sha256 TEXT PRIMARY KEY, path TEXT NOT NULL, bytes INTEGER NOT NULL, imported_at INTEGER NOT NULL, runs TEXT NOT NULL DEFAULT '[]') WITHOUT ROWID;
`,
	// 10: a samples row may hold a block of samples (block.go): its ts is
	// the first one's, its frame says how many. Nothing in the tables
	// changes; the version does, so that a wtd that knows no blocks
	// refuses the database rather than reading them as damaged frames.
	`SELECT 1;`,
	// 11: pushing runs to a central results store (package fleet). The
	// host's id, made once at random: with a run's id it names the run
	// everywhere (HOSTID:RUN). The outbox: a run queued to be pushed,
	// until the store acknowledged it (pushed_at set); attempts, when the
	// next one is due and the last error are the retries' state, dest is
	// the store it went to (its URI without password, and the database).
	// No SQL comments, as in 9.
	`
CREATE TABLE host_identity (id TEXT NOT NULL PRIMARY KEY) WITHOUT ROWID;
INSERT INTO host_identity (id) VALUES (lower(hex(randomblob(6))));
CREATE TABLE outbox (
	run_id     INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
	queued_at  INTEGER NOT NULL,
	attempts   INTEGER NOT NULL DEFAULT 0,
	next_at    INTEGER NOT NULL,
	last_error TEXT    NOT NULL DEFAULT '',
	pushed_at  INTEGER,
	dest       TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX outbox_waiting ON outbox (next_at) WHERE pushed_at IS NULL;
`,
}

// migrate brings the database to len(list) steps of list, each in its own
// transaction, and refuses a database made by a newer wtd.
func migrate(ctx context.Context, db *sql.DB, list []string) error {
	for {
		v, err := schemaVersion(ctx, db)
		if err != nil {
			return err
		}
		if v > len(list) {
			return fmt.Errorf("check schema: database schema version %d is newer than this wtd knows (%d): use a newer wtd", v, len(list))
		}
		if v == len(list) {
			return nil
		}
		if err := migrateOne(ctx, db, list, v); err != nil {
			return err
		}
	}
}

func schemaVersion(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// migrateOne applies step from, unless another process did it first.
func migrateOne(ctx context.Context, db *sql.DB, list []string, from int) error {
	tx, err := db.BeginTx(ctx, nil) // immediate: one migrating process at a time
	if err != nil {
		return fmt.Errorf("migrate schema to %d: %w", from+1, err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("migrate schema to %d: %w", from+1, err)
	}
	if v != from {
		return nil // someone else moved it; look again
	}
	if _, err := tx.ExecContext(ctx, list[from]); err != nil {
		return fmt.Errorf("migrate schema to %d: %w", from+1, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", from+1)); err != nil {
		return fmt.Errorf("migrate schema to %d: %w", from+1, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate schema to %d: %w", from+1, err)
	}
	return nil
}
