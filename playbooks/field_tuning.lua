-- field_tuning.lua: seed 004's field tuning on a mongod that ops already run
-- (docs/playbooks.md): cacheSizeGB down, then eviction targets/triggers,
-- dirty targets/triggers, eviction threads and the checkpoint interval, one
-- after the other, with the same read/update workload after each change.
--
-- The server is a service (mongod.service): wtd run needs
-- --allow-service UNIT. cacheSizeGB is changed in its YAML config file and
-- the unit restarted through its service manager; the others are changed at
-- runtime (m:reconfigure, setParameter syncdelay). At the end of the run,
-- however it ends, the original config file is put back, the service
-- restarted once and the runtime values set back (README: "Tuning a mongod
-- you already run"). The workload writes to its own collection `ns`
-- (loaded with `docs` documents when it holds fewer); the server's other
-- data is only read by it through the cache it shares.
--
-- The report: p99 and application-thread eviction time per setting
-- (report.table's `p99 ms` and `app evict ms` columns).
--
-- Parameters: unit ("mongod"), config ("/etc/mongod.conf"), uri
-- ("mongodb://127.0.0.1:27017"), service_manager ("systemctl"), cache_gb
-- (50), ns ("wtd_field.tuning"), docs (200000), doc_bytes (1000), duration
-- (60 s a setting; 0: use ops), ops (0), threads (8), checkpoint_s (25).

local p = params{
  unit = "mongod",
  config = "/etc/mongod.conf",
  uri = "mongodb://127.0.0.1:27017",
  service_manager = { "systemctl" },
  cache_gb = 50,
  ns = "wtd_field.tuning",
  docs = 200000,
  doc_bytes = 1000,
  duration = 60,
  ops = 0,
  threads = 8,
  checkpoint_s = 25,
}

local m = mongod.service{ unit = p.unit, config = p.config, uri = p.uri, service_manager = p.service_manager }

local have = 0
local ok, stats = pcall(function() return m:collection_stats(p.ns) end)
if ok then have = stats.count end
if have < p.docs then
  step{ name = "load", run = function()
    return m:load{ ns = p.ns, docs = p.docs - have, doc_bytes = p.doc_bytes, start_id = have, threads = 2 }
  end }
end

local function measure(label)
  step{ name = "workload", setting = label, server = m, ns = p.ns, run = function()
    return m:workload{ ns = p.ns, threads = p.threads, mix = { read = 7, update = 3 },
                       duration = p.duration > 0 and p.duration or nil,
                       ops = p.ops > 0 and p.ops or nil }
  end }
end

-- Each change adds to the ones before, as a tuning session goes.
local changes = {
  { label = "as configured" },
  { label = "cacheSizeGB " .. p.cache_gb,      apply = function() m:restart{ cacheSizeGB = p.cache_gb } end },
  { label = "+ eviction 75/97",                apply = function() m:reconfigure("eviction_target=75,eviction_trigger=97") end },
  { label = "+ dirty 3/30",                    apply = function() m:reconfigure("eviction_dirty_target=3,eviction_dirty_trigger=30") end },
  { label = "+ eviction threads 14/18",         apply = function() m:reconfigure("eviction=(threads_min=14,threads_max=18)") end },
  { label = "+ checkpoint " .. p.checkpoint_s .. " s", apply = function() m:set_parameter("syncdelay", p.checkpoint_s) end },
}

for _, c in ipairs(changes) do
  if c.apply then c.apply() end
  measure(c.label)
end

report.table{ by = "setting", title = "field tuning: p99 and application-thread eviction per setting" }
