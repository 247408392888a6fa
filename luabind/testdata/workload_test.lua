-- m:workload's operations, distributions, presets, rate, warm-up and
-- watch; sweep.threads. The Go test checks the steps it records.
local function fails(f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok, "expected an error")
  return tostring(e)
end
local function has(s, sub)
  assert(s:find(sub, 1, true), ("%q does not contain %q"):format(s, sub))
end
local function near(x, want, tol, what)
  assert(math.abs(x - want) <= tol, ("%s: %s, want %s +- %s"):format(what, tostring(x), tostring(want), tostring(tol)))
end

local m = mongod.start{ cacheSizeGB = 0.25 }
has(fails(function() return m:workload{ ops = 10 } end), "workload: ns is required (no m:load gave a default)")
m:load{ ns = "w.c", docs = 2000, doc_bytes = 200 }
-- Without ns, key_space and doc_bytes: the load's namespace and size, collStats' count.
local d = m:workload{ ops = 100, mix = { read = 1, insert = 1 } }
assert(d.total.count == 100 and d.total.errors == 0 and d.next_insert_id > 2000, "defaults: " .. d.total.errors .. " errors, next id " .. d.next_insert_id)
assert(m:collection_stats("w.c").avg_obj_size == 200, "inserts of the load's size")

-- Scans, read-modify-writes and queries in one mix.
local w = m:workload{ ops = 600, threads = 2, scan_max = 5, query = { filter = { _id = { ["$lte"] = "$key" } }, count = true },
                      mix = { scan = 1, rmw = 1, query = 1 } }
assert(w.total.count == 600 and w.total.errors == 0, "mixed count " .. w.total.count)
assert(w.ops.scan.count > 100 and w.ops.rmw.count > 100 and w.ops.query.count > 100, "every op ran")
assert(w.ops.scan.docs >= w.ops.scan.count and w.ops.scan.docs <= 5 * w.ops.scan.count, "scan lengths: " .. w.ops.scan.docs)
assert(w.ops.query.docs > w.ops.query.count, "counts of _id <= key add up: " .. w.ops.query.docs)
assert(w.mix.scan == 1 and w.distribution == "uniform", "the result says what ran")

-- A find with a sort given as a list of pairs, limited.
local q = m:workload{ ops = 50, mix = { query = 1 },
                      query = { filter = { _id = { ["$gte"] = "$key" } }, sort = { { "_id", -1 } }, limit = 2 } }
assert(q.ops.query.docs <= 100 and q.ops.query.docs >= 95, "limit 2: " .. q.ops.query.docs)

-- Presets, overridden field by field.
local f = m:workload{ workload = "ycsb-f", ops = 400, threads = 2 }
assert(f.workload == "ycsb-f" and f.distribution == "scrambled_zipfian" and f.ops.rmw.count > 100 and f.ops.read.count > 100, "ycsb-f")
local b = m:workload{ workload = "ycsb-b", distribution = "zipfian", ops = 100 }
assert(b.distribution == "zipfian" and b.ops.read.count > 0, "ycsb-b with the plain zipfian")
local sz = m:workload{ distribution = "scrambled_zipfian", ops = 100 }
assert(sz.distribution == "scrambled_zipfian" and sz.ops.read.count == 100 and sz.ops.read.errors == 0, "scrambled_zipfian by name")
local c = m:workload{ workload = "ycsb-c", distribution = "hotspot", hot_fraction = 0.1, hot_ops = 0.9, ops = 100 }
assert(c.distribution == "hotspot" and c.ops.read.count == 100 and c.ops.update == nil, "ycsb-c with hotspot")
local d = m:workload{ workload = "ycsb-d", ops = 400 }
assert(d.distribution == "latest" and d.ops.insert.count > 0 and d.ops.read.errors == 0, "ycsb-d")

-- An open loop at a rate, with a warm-up of operations.
local r = m:workload{ duration = 1, rate = 300, threads = 2, warmup = "100 ops" }
assert(r.rate and r.behind == nil, "rate kept")
near(r.rate.achieved_ops_per_sec, 300, 15, "achieved rate")
assert(r.total.service and r.total.service.p99_micros > 0, "service times beside the corrected ones")
assert(r.warmup.by == "100 ops" and r.warmup.ops == 100, "warm-up of 100 ops: " .. tostring(r.warmup.ops))
near(r.total.count, 300, 10, "measured operations after the warm-up")
assert(r.series[1].warmup == true, "the first second is in the warm-up")
-- A schedule of rates, watched.
local s = m:workload{ rate = { 100, 300 }, rate_step = 0.5, watch = { "opcounters.query" }, watch_interval = 0.05 }
near(s.total.count, 200, 6, "a schedule of two half seconds")
local wq = s.watch["opcounters.query"]
assert(wq.samples >= 5 and wq["end"] - wq.start == s.total.count, "watched opcounters.query")
local ws = m:workload{ duration = 0.3, warmup = 0.2 }
assert(ws.warmup.by == "200ms", "warm-up in seconds: " .. ws.warmup.by)

-- Errors name the option.
has(fails(m.workload, m, { ops = 1, workload = "ycsb-z" }), 'workload "ycsb-z" is not a preset')
has(fails(m.workload, m, { ops = 1, rate = "fast" }), "workload: rate must be operations per second or a list of them")
has(fails(m.workload, m, { ops = 1, rate = { 1, "x" }, rate_step = 1 }), "rate[2] must be a number")
has(fails(m.workload, m, { ops = 1, warmup = "soon" }), 'warmup must be seconds (a number or "30s") or operations ("1000 ops")')
has(fails(m.workload, m, { ops = 1, mix = { query = 1 }, query = { filtr = {} } }), 'workload: query: unknown option "filtr"')
has(fails(m.workload, m, { ops = 1, mix = { query = 1 }, query = { sort = { a = 1, b = 1 } } }), "workload: query: sort { field = dir } names 2 fields: a compound key needs its order")
has(fails(m.workload, m, { ops = 1, mix = { query = 1 }, query = { count = "yes" } }), "count must be a boolean")
has(fails(m.workload, m, { ops = 1, distribution = "hotspot", hot_ops = 2 }), "hot_ops 2 out of range (0, 1]")
has(fails(m.workload, m, { ops = 1, watch = { "no.such" } }), "serverStatus has no number at no.such")

-- The knee of a small sweep: one step per thread count.
local sw = sweep.threads{ workload = { mix = { read = 1 } }, threads = { 1, 2 }, duration = 0.3, name = "knee", round = 1 }
assert(#sw.points == 2 and sw.points[1].threads == 1 and sw.points[2].threads == 2, "two points")
assert(sw.points[1].ops_per_sec > 0 and sw.points[2].p99_micros > 0, "measured points")
assert(type(sw.reason) == "string" and #sw.reason > 0, "a reason")
assert(sw.knee == nil or sw.knee == 1, "the knee is a swept count or nil")
has(fails(sweep.threads, { workload = { mix = { read = 1 } } }), "workload = {...} and threads = {...} are required")
has(fails(sweep.threads, { workload = { mixx = 1 }, threads = { 1 } }), 'sweep.threads: workload: unknown option "mixx"')
has(fails(sweep.threads, { workload = {}, threads = { 1.5 } }), "threads must be whole numbers")
