-- autotune.lua: let wtd search the eviction and checkpoint knobs a field
-- report turned by hand (docs/playbooks.md), with a budget, guards and a
-- confirmed verdict.
--
-- One server with a small cache is loaded once; then tune{} runs the
-- workload unmeasured for warm_up seconds (the baseline runs first after
-- the load and would otherwise pay for the cold cache alone), then measures
-- an update-heavy open-loop workload (a fixed rate, so p99 is measured
-- without coordinated omission, after a warm-up) with the server's own
-- settings (the baseline), then with each setting the optimiser proposes, each a step
-- "trial N"; at the end the best setting and the baseline run again by
-- turns and wtd compare's statistics give the verdict. The server gets its
-- settings back at the end.
--
-- Parameters: cache (GB, 0.25), docs (600000), doc_bytes (1000: 600 MB),
-- rate (ops/s, 2000), threads (8), duration (s, 20), warmup (s, 5),
-- warm_up (s, 10: before the baseline), trials (12), initial (6),
-- confirm (3), p99_guard (10), seed (1). With the defaults a trial takes
-- 25 s: about 12 minutes on two cores, the load included.

local p = params{
  cache = 0.25,
  docs = 600000,
  doc_bytes = 1000,
  rate = 2000,
  threads = 8,
  duration = 20,
  warmup = 5,
  warm_up = 10,
  trials = 12,
  initial = 6,
  confirm = 3,
  p99_guard = 10,
  seed = 1,
}

local m = mongod.start{ cacheSizeGB = p.cache }
step{ name = "load", run = function()
  return m:load{ ns = "bench.tune", docs = p.docs, doc_bytes = p.doc_bytes, threads = 2 }
end }

local r = tune{
  server = m,
  knobs = {
    eviction_target = { 50, 90 },           -- below the trigger the server keeps (95)
    eviction_dirty_target = { 1, 10 },
    eviction_dirty_trigger = { 15, 40 },
    ["eviction.threads_max"] = { 4, 16 },   -- at least the server's threads_min (4)
    ["checkpoint.wait"] = { 10, 120, log = true },
  },
  workload = { ns = "bench.tune", duration = p.duration, warmup = p.warmup, rate = p.rate, threads = p.threads,
               mix = { update = 8, read = 2 } },
  objective = { measure = "p99" },
  budget = { trials = p.trials, initial = p.initial },
  guard = { p99_factor = p.p99_guard },
  warm_up = p.warm_up,
  confirm = p.confirm,
  seed = p.seed,
}

print(string.format("%-14s %-10s %10s  %s", "trial", "status", "p99 ms", "settings"))
for _, t in ipairs(r.trials) do
  local keys = {}
  for k in pairs(t.settings) do keys[#keys + 1] = k end
  table.sort(keys)
  local words = {}
  for _, k in ipairs(keys) do words[#words + 1] = k .. "=" .. t.settings[k] end
  local obj = t.objective and string.format("%.3f", t.objective) or "–"
  print(string.format("%-14s %-10s %10s  %s", t.name, t.status, obj, table.concat(words, " ")))
  if t.reason then print("               " .. t.reason) end
end
print("verdict: " .. r.verdict)
report.table{ by = "setting", title = "confirmation: best setting and baseline by turns" }
