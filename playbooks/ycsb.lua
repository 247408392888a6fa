-- ycsb.lua: YCSB's core workloads A to F on one data set (see docs/playbooks.md).
--
-- A fresh server is loaded once; then each core workload runs in turn as
-- its own step, from `threads` threads for `duration` seconds after a
-- warm-up of `warmup` seconds that is left out of the figures:
--   A  50% reads, 50% updates                 zipfian
--   B  95% reads, 5% updates                  zipfian
--   C  reads only                             zipfian
--   D  95% reads, 5% inserts                  latest (the newest keys are the hottest)
--   E  95% scans of 1..100 documents, 5% inserts   zipfian
--   F  50% reads, 50% read-modify-writes      zipfian
-- zipfian is YCSB's scrambled zipfian (wtd's "scrambled_zipfian").
-- The table gives ops/s and latency per workload; the lines after it break
-- them down by operation. A status line every 10 s shows each run as it goes.
--
-- Parameters: docs (100000), doc_bytes (1000), threads (32), duration (20),
-- warmup (5), cache (GB, 1), workloads (comma list: a,b,c,d,e,f).

local p = params{
  docs = 100000,
  doc_bytes = 1000,
  threads = 32,
  duration = 20,
  warmup = 5,
  cache = 1,
  workloads = { "a", "b", "c", "d", "e", "f" },
}

local ns = "ycsb.usertable"
local m = mongod.start{ cacheSizeGB = p.cache }
step{ name = "load", run = function()
  return m:load{ ns = ns, docs = p.docs, doc_bytes = p.doc_bytes, threads = 2 }
end }

local lines = {}
for _, w in ipairs(p.workloads) do
  local name = "ycsb-" .. w
  local r = step{ name = name, workload = name, run = function()
    return m:workload{ ns = ns, workload = name, threads = p.threads, duration = p.duration, warmup = p.warmup }
  end }
  for _, op in ipairs{ "read", "update", "insert", "scan", "rmw" } do
    local s = r.ops[op]
    if s then
      lines[#lines + 1] = ("%-7s %-6s %8d ops %8.0f ops/s  p50 %7.3f ms  p99 %7.3f ms  errors %d"):format(
        name, op, s.count, s.ops_per_sec, s.p50_micros / 1000, s.p99_micros / 1000, s.errors)
    end
  end
end

report.table{ by = "workload", title = "YCSB core workloads (" .. p.threads .. " threads)" }
print(table.concat(lines, "\n"))
