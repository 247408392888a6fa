-- eviction_sweep.lua: update-heavy load under the eviction and checkpoint
-- settings a field report tuned (docs/playbooks.md) (eviction targets and triggers, dirty
-- targets and triggers, eviction threads, checkpoint interval).
--
-- One server is loaded once; then, for each setting, it is restarted with
-- that --wiredTigerEngineConfigString (and --syncdelay) and an update/insert
-- mix runs from many threads. Compare ops/s, p99 latency and the dirty peak;
-- `wtd show RUN` has the application-thread eviction time of each step.
--
-- Parameters: cache (GB, 0.25), docs (200000), doc_bytes (1000),
-- ops (20000), threads (8). With the defaults it takes about a minute on two
-- cores: the default settings are the slow ones.

local p = params{
  cache = 0.25,
  docs = 200000,
  doc_bytes = 1000,
  ops = 20000,
  threads = 8,
}

local settings = {
  { label = "default",            engine = "",                                                   syncdelay = 60 },
  { label = "target 75/97",       engine = "eviction_target=75,eviction_trigger=97",             syncdelay = 60 },
  { label = "dirty 3/25",         engine = "eviction_dirty_target=3,eviction_dirty_trigger=25",  syncdelay = 60 },
  { label = "threads 8/12",       engine = "eviction=(threads_min=8,threads_max=12)",            syncdelay = 60 },
  { label = "checkpoint 25 s",    engine = "",                                                   syncdelay = 25 },
}

local m = mongod.start{ cacheSizeGB = p.cache }
step{ name = "load", run = function()
  return m:load{ ns = "bench.e", docs = p.docs, doc_bytes = p.doc_bytes, threads = 2 }
end }

for _, s in ipairs(settings) do
  m:restart{ engineConfig = s.engine, syncdelay = s.syncdelay }
  step{ name = "updates", setting = s.label, run = function()
    return m:workload{ ns = "bench.e", ops = p.ops, threads = p.threads,
                       mix = { update = 8, insert = 2 } }
  end }
end

report.table{ by = "setting", title = "eviction and checkpoint settings under updates" }
