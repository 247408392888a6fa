-- mongod: start, handle fields, parameters, status, commands, load,
-- workload, restart, connect. The Go test passes -p ops=1000.
local p = params{ docs = 2000, doc_bytes = 500, ops = 100 }

local function fails(f, ...)
  local ok, e = pcall(f, ...)
  local keys = {}
  for _, a in ipairs({ ... }) do
    if type(a) == "table" then for k, v in pairs(a) do keys[#keys + 1] = tostring(k) .. "=" .. tostring(v) end end
  end
  assert(not ok, "expected an error, options: " .. table.concat(keys, " "))
  return tostring(e)
end
local function has(s, sub)
  assert(s:find(sub, 1, true), ("%q does not contain %q"):format(s, sub))
end
local function cache_max(m)
  return m:server_status().wiredTiger.cache["maximum bytes configured"]
end

-- Options are checked before anything starts.
has(fails(mongod.start, { cachesize = 1 }), 'unknown option "cachesize"; did you mean cacheSizeGB? (allowed: args, cacheSizeGB, dbpath, engineConfig, port, setParameter, syncdelay)')
has(fails(mongod.start, { setParameter = { x = {} } }), "setParameter.x must be a number, boolean or string, got table")
has(fails(mongod.start, { args = { 1 } }), "args[1] must be a string")
-- Flags that name a path are refused, naming what to use instead, and a
-- file named is never quoted.
local cfg = fails(mongod.start, { args = { "--nojournal", "-f", "/etc/passwd" } })
has(cfg, "mongod.start: validate mongod settings: args[2] -f is refused: a playbook names no configuration file")
assert(not cfg:find("root:", 1, true), "the error quotes the file: " .. cfg)
has(fails(mongod.start, { args = { "--logpath=/tmp/wtd-test.log" } }), "args[1] --logpath is refused: the run directory holds the server's log")
has(fails(mongod.start, { args = { "--dbpath", "/tmp" } }), 'args[1] --dbpath is refused: use dbpath = "..."')
has(fails(mongod.start, { args = { "--pidfilepath", "/tmp/x.pid" } }), "--pidfilepath is refused")
has(fails(mongod.start, { args = { "--keyFile", "/etc/passwd" } }), "--keyFile is refused")
has(fails(mongod.start, { args = { "--tlsCertificateKeyFile=/etc/passwd" } }), "--tlsCertificateKeyFile is refused")
has(fails(mongod.start, { engineConfig = "extensions=[/tmp/x.so]" }), 'the WiredTiger key "extensions" is refused')
has(fails(mongod.start, { setParameter = { diagnosticDataCollectionDirectoryPath = "/tmp/ftdc" } }), "diagnosticDataCollectionDirectoryPath is refused")
-- dbpath: inside the run directory, or under a directory allowed with --allow-dir.
local out = fails(mongod.start, { dbpath = "/tmp/wtd-test-not-allowed/db" })
has(out, "mongod.start: dbpath /tmp/wtd-test-not-allowed/db is outside the run directory")
has(out, "no directory is allowed with wtd run --allow-dir")
has(fails(mongod.start, { dbpath = "../escape" }), "is outside the run directory")
local e = fails(mongod.start, { cacheSizeGB = 0.1 })
has(e, "storage.wiredTiger.engineConfig.cacheSizeGB must be greater than or equal to 0.25")
assert(e:match("^testdata/mongod_test.lua:%d+: mongod.start: "), e)

local m = mongod.start{ cacheSizeGB = 0.25, syncdelay = 30, setParameter = { cursorTimeoutMillis = 500000, ttlMonitorEnabled = false } }
assert(m.name == "m1", "name " .. tostring(m.name))
assert(m.uri:match("^mongodb://127%.0%.0%.1:%d+"), "uri " .. m.uri)
assert(type(m.pid) == "number" and m.pid > 0, "pid")
assert(m.started == true, "started")
assert(tostring(m):match("^server m1 mongodb://"), tostring(m))
has(fails(function() return m.nosuch end), 'server m1 has no field "nosuch"')
has(fails(function() m.uri = "x" end), "read-only")
has(fails(m.stop, "m"), "server handle expected")

-- serverStatus as nested tables.
local st = m:server_status()
assert(cache_max(m) == 268435456, "cache at start " .. tostring(cache_max(m)))
assert(type(st.uptime) == "number" and type(st.localTime) == "number", "numbers and dates are numbers")
assert(st.localTime > 1.6e12, "localTime in ms " .. tostring(st.localTime))
assert(type(st.wiredTiger.cache) == "table", "nested tables")

-- Parameters: startup ones, set/get at runtime, reconfigure.
assert(m:get_parameter("cursorTimeoutMillis") == 500000, "startup setParameter")
assert(m:get_parameter("ttlMonitorEnabled") == false, "boolean parameter")
assert(m:set_parameter("cursorTimeoutMillis", 300000) == 500000, "set_parameter returns the previous value")
assert(m:get_parameter("cursorTimeoutMillis") == 300000, "set_parameter took")
has(fails(m.set_parameter, m, "cursorTimeoutMillis", {}), "number, boolean or string expected")
has(fails(m.get_parameter, m, "noSuchParameter"), "get_parameter")
m:reconfigure("cache_size=300M")
assert(cache_max(m) == 314572800, "reconfigure cache_size=300M: " .. tostring(cache_max(m)))
has(fails(m.reconfigure, m, "no_such_setting=1"), "reconfigure")

-- Commands.
assert(m:command{ ping = 1 }.ok == 1, "ping")
local gp = m:command("getParameter", { cursorTimeoutMillis = 1 })
assert(gp.cursorTimeoutMillis == 300000, "command with args")
has(fails(m.command, m, { a = 1, b = 2 }), "exactly one name = value")

-- Load and workload.
local l = m:load{ ns = "bench.c", docs = p.docs, doc_bytes = p.doc_bytes, batch = 500, threads = 2 }
assert(l.docs == 2000 and l.bytes == 2000 * 500 and l.errors == 0, "load counts")
assert(l.docs_per_sec > 0 and l.mb_per_sec > 0 and l.elapsed_ns > 0, "load rates")
assert(l.batch.count == 4, "4 batches of 500: " .. tostring(l.batch.count))
local cs = m:collection_stats("bench.c")
assert(cs.count == 2000 and cs.avg_obj_size == 500, "collection_stats " .. cs.count .. " " .. cs.avg_obj_size)
has(fails(m.load, m, { ns = "bench.c", docs = 10 }), "load: doc_bytes is required")
has(fails(m.load, m, { ns = "bench.c", docs = 0, doc_bytes = 500 }), "docs 0 out of range")

local w = m:workload{ ops = p.ops, threads = 2, mix = { read = 0.8, update = 0.2 }, working_set = "50%" }
assert(w.total.count == 1000 and w.total.errors == 0, "workload count " .. tostring(w.total.count))
assert(w.ops.read.count > 0 and w.ops.update.count > 0, "read and update ops")
assert(w.ops.read.count + w.ops.update.count == 1000, "ops add up")
assert(w.ops.read.p99_micros > 0 and w.total.ops_per_sec > 0, "latency and rate")
assert(w.ops.insert == nil, "no insert entry")
assert(type(w.series) == "table", "series")

local w2 = m:workload{ ns = "bench.c", duration = 0.3, mix = { read = 1 }, working_set = 0.1, distribution = "zipfian", seed = 7 }
assert(w2.total.count > 0 and w2.elapsed_ns >= 0.3e9, "duration-bound workload")
local w3 = m:workload{ ops = 200, mix = { insert = 1 } }
assert(w3.ops.insert.count == 200 and w3.next_insert_id == 2200, "inserts after the loaded ids: " .. tostring(w3.next_insert_id))
local w4 = m:workload{ ops = 100, working_set = "0.5MB" }
assert(w4.ops.read.count == 100, "working set in MB")
has(fails(m.workload, m, { ops = 10, mix = { reed = 1 } }), 'workload: mix: unknown option "reed"; did you mean read? (allowed: insert, query, read, rmw, scan, update)')
has(fails(m.workload, m, { ops = 10, working_set = "lots" }), "working_set must be a fraction")
has(fails(m.workload, m, { ops = 10, working_set = 0 }), "working set 0 out of range (0, 1]")
has(fails(m.workload, m, { ops = 10, distribution = "normal" }), "distribution")

-- Restart: changed settings, the rest kept.
local port = m.uri:match(":(%d+)")
m:restart{ cacheSizeGB = 0.5 }
assert(cache_max(m) == 536870912, "cache after restart " .. tostring(cache_max(m)))
assert(m.uri:match(":(%d+)") == port, "same port")
assert(m:get_parameter("cursorTimeoutMillis") == 500000, "startup parameters kept")
assert(m:collection_stats("bench.c").count == 2200, "same dbpath")
local re = fails(m.restart, m, { cacheSizeGB = 0.1 })
has(re, "storage.wiredTiger.engineConfig.cacheSizeGB must be greater than or equal to 0.25")
assert(re:match("^testdata/mongod_test.lua:%d+: restart m1: "), re)
assert(cache_max(m) == 536870912, "a refused restart leaves the server as it was")
has(fails(m.restart, m, { port = 1 }), 'unknown option "port"')
has(fails(m.restart, m, { args = { "--config=/etc/passwd" } }), "restart m1: validate mongod settings: args[1] --config is refused")
has(fails(m.restart, m, { args = { "--logpath", "/tmp/x" } }), "args[1] --logpath is refused")
assert(cache_max(m) == 536870912, "a refused restart leaves the server running")

-- Attached servers.
local a = mongod.connect{ uri = m.uri }
assert(a.name == "m2" and a.started == false and a.pid == 0, "attached handle")
assert(a:server_status().wiredTiger.cache["maximum bytes configured"] == 536870912, "same server")
has(fails(a.restart, a, { cacheSizeGB = 1 }), "cannot restart a server attached with mongod.connect")
a:stop()

m:stop()
assert(m.pid == 0, "stopped")
