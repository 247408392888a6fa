-- ttl_offpeak.lua: TTL deletes during the peak, then moved off-peak (see docs/playbooks.md).
--
-- A collection with a TTL index takes steady reads, updates and inserts
-- ("peak") while documents expire, in two phases on a fresh server each:
--   peak    the documents carry createdAt and the index expireAfterSeconds
--           on it, so they expire during the peak;
--   offpeak the documents carry expireAt, a random moment inside a later
--           "night" window, and the index expireAfterSeconds 0, so the
--           TTL monitor deletes them at night.
-- Time is compressed: the TTL monitor passes every ttl_sleep seconds, the
-- peak lasts `peak` seconds and the night at most `night` seconds: it ends
-- once the monitor has deleted every document due. Reads and
-- updates go to documents that never expire (ids below docs); the expiring
-- ones are loaded besides them, their dates planned from the measured
-- speed of the first load so that nothing expires before the peak.
--
-- For each phase the table gives the peak traffic's ops/s, p50 and p99,
-- the TTL deletes (metrics.ttl.deletedDocuments) and passes during the
-- peak and during the night, how long the night took to delete what was
-- due, and the expired documents left at the end (0 unless the night was
-- too short for the monitor).
--
-- Parameters: docs (200000, never expire), expiring (200000), doc_bytes
-- (1000), peak (30 s), night (240 s at most), threads (8), ttl_sleep (1 s),
-- expire_after (3600 s, the peak phase's expireAfterSeconds), cache_gb (1).

local p = params{
  docs = 200000,
  expiring = 200000,
  doc_bytes = 1000,
  peak = 30,
  night = 240,
  threads = 8,
  ttl_sleep = 1,
  expire_after = 3600,
  cache_gb = 1,
}

local mix = { read = 0.7, update = 0.2, insert = 0.1 }

local function ttl(m)
  local t = m:server_status().metrics.ttl
  return t.deletedDocuments, t.passes
end

-- phase runs one phase; dated(peak_start, night_start) returns the index
-- options, the load's date and the peak inserts' date.
local function phase(name, dated)
  local m = mongod.start{ cacheSizeGB = p.cache_gb,
    setParameter = { ttlMonitorEnabled = true, ttlMonitorSleepSecs = p.ttl_sleep } }
  local ns = "app.events"
  local began = os.time()
  step{ name = "load", phase = name, server = m, run = function()
    return m:load{ ns = ns, docs = p.docs, doc_bytes = p.doc_bytes, threads = 2 }
  end }
  -- The expiring documents load at about the same speed: plan the peak
  -- after their load with room to spare.
  local budget = math.ceil((os.time() - began) * p.expiring / p.docs * 1.5) + 3
  local peak_start = os.time() + budget
  local night_start = peak_start + p.peak + 2
  local d = dated(peak_start, night_start)
  m:create_index{ ns = ns, key = d.index.key, expireAfterSeconds = d.index.expireAfterSeconds }
  step{ name = "load expiring", phase = name, server = m, run = function()
    return m:load{ ns = ns, docs = p.expiring, doc_bytes = p.doc_bytes, threads = 2, start_id = p.docs, date = d.load }
  end }
  if os.time() >= peak_start then
    error(("%s: loading the expiring documents took past the planned peak start; lower expiring or raise docs"):format(name))
  end
  sleep(peak_start - os.time())

  local del0, pass0 = ttl(m)
  local w = step{ name = "peak", phase = name, server = m, run = function()
    return m:workload{ ns = ns, duration = p.peak, threads = p.threads, mix = mix, key_space = p.docs,
      insert_start_id = p.docs + p.expiring, date = d.insert }
  end }
  local del1, pass1 = ttl(m)
  if os.time() < night_start then sleep(night_start - os.time()) end
  -- Expiring documents still there: loaded ones, and inserted ones when
  -- they are due by the end of the night.
  local function left()
    local n = m:collection_stats(ns).count - p.docs
    if not d.inserts_due then n = n - w.ops.insert.count end
    return n
  end
  -- The night is counted from its start, in the step and in the table alike.
  local del2, pass2 = ttl(m)
  local night_began = os.time()
  step{ name = "night", phase = name, server = m, run = function()
    while left() > 0 and os.time() - night_began < p.night do sleep(1) end
    local del, passes = ttl(m)
    return { ttl_deleted = del - del2, ttl_passes = passes - pass2 }
  end }
  local night_secs = os.time() - night_began
  local del3, pass3 = ttl(m)
  local remaining = left()
  m:stop()
  return {
    name = name, ops = w.total.ops_per_sec, p50 = w.total.p50_micros / 1000, p99 = w.total.p99_micros / 1000,
    errors = w.total.errors, peak_deleted = del1 - del0, peak_passes = pass1 - pass0,
    night_deleted = del3 - del2, night_passes = pass3 - pass2, night_secs = night_secs, left = remaining,
  }
end

local results = {}
-- Expiry in the peak: createdAt spread so that createdAt + expire_after
-- falls inside the peak; inserts are dated now (they expire an
-- expire_after later).
-- (From a second into the peak: os.time() counts whole seconds, so the
-- peak starts up to a second after peak_start.)
results[1] = phase("peak", function(peak_start)
  local from = peak_start - p.expire_after
  return {
    index = { key = "createdAt", expireAfterSeconds = p.expire_after },
    load = { field = "createdAt", from = from + 1, to = from + p.peak },
    insert = { field = "createdAt" },
  }
end)
-- Moved off-peak: expireAt is a random moment of the night window, and so
-- is that of every document the peak inserts.
results[2] = phase("offpeak", function(_, night_start)
  local night = { field = "expireAt", from = night_start, to = night_start + p.night / 2 }
  return { index = { key = "expireAt", expireAfterSeconds = 0 }, load = night, insert = night, inserts_due = true }
end)

report.table{ by = "phase", title = "TTL deletes in the peak and off-peak" }
print()
print(("%-8s %10s %8s %8s %7s %14s %11s %15s %12s %8s %6s"):format(
  "phase", "peak ops/s", "p50 ms", "p99 ms", "errors", "peak deletes", "peak passes", "night deletes", "night passes", "night s", "left"))
for _, r in ipairs(results) do
  print(("%-8s %10.0f %8.2f %8.2f %7d %14d %11d %15d %12d %8d %6d"):format(
    r.name, r.ops, r.p50, r.p99, r.errors, r.peak_deleted, r.peak_passes, r.night_deleted, r.night_passes, r.night_secs, r.left))
  log(("%s: peak p99 %.2f ms, %d TTL deletes in the peak, %d at night, %d expiring documents left"):format(
    r.name, r.p99, r.peak_deleted, r.night_deleted, r.left))
end
