-- knee.lua: the knee of throughput against threads (see docs/playbooks.md).
--
-- A fresh server is loaded; then one workload (by default 50% reads, 35%
-- updates, 15% inserts, zipfian) runs at each thread count in turn, each
-- as its own step labelled threads = N, for `duration` seconds after a
-- warm-up of `warmup` seconds. The knee is the smallest thread count from
-- which every larger count has less than 10% more throughput per doubling
-- of the threads and a higher p99 latency: more threads past it only
-- queue. When the counts swept do not reach it, the playbook says why. A
-- last step named "knee" records the table and the knee with the run.
--
-- Parameters: docs (100000), doc_bytes (1000), threads (comma list:
-- 1,2,4,8,16,32,64), duration (20), warmup (2), cache (GB, 1), read (0.5),
-- update (0.35), insert (0.15), distribution (zipfian).

local p = params{
  docs = 100000,
  doc_bytes = 1000,
  threads = { 1, 2, 4, 8, 16, 32, 64 },
  duration = 20,
  warmup = 2,
  cache = 1,
  read = 0.5,
  update = 0.35,
  insert = 0.15,
  distribution = "zipfian",
}

local ns = "knee.c"
local m = mongod.start{ cacheSizeGB = p.cache }
step{ name = "load", run = function()
  return m:load{ ns = ns, docs = p.docs, doc_bytes = p.doc_bytes, threads = 2 }
end }

local sw = sweep.threads{
  workload = { ns = ns, mix = { read = p.read, update = p.update, insert = p.insert },
               distribution = p.distribution, warmup = p.warmup },
  threads = p.threads,
  duration = p.duration,
}

report.table{ by = "threads", title = "throughput and latency against threads" }
step{ name = "knee", run = function() return sw end }
if sw.knee then
  print(("knee: %d threads (%s)"):format(sw.knee, sw.reason))
else
  print("knee: none (" .. sw.reason .. ")")
end
