-- cache_sweep.lua: how WiredTiger's cache size changes random reads
-- (see docs/playbooks.md).
--
-- A fresh server is loaded with incompressible documents, more data than the
-- smallest cache holds. Then, for each cache size: restart with that
-- cacheSizeGB, and for each round drop the OS page cache and do random reads
-- by _id over a small working set (that fits the cache) and over the whole
-- data set. The table at the end shows, per step, reads/s, latency and the
-- pages WiredTiger read into its cache per read (the original measured 0.00 for a
-- 60 MB working set and 0.62 for 600 MB in a 256 MB cache).
--
-- Parameters (wtd run playbooks/cache_sweep.lua -p name=value):
--   sizes        cache sizes in GB, comma list        (0.25,2; below 0.25 via cache_size)
--   docs         documents to load                    (600000, about 600 MB)
--   doc_bytes    size of each document                (1000)
--   reads        random reads per step                (20000)
--   working_set  small working set in MB              (60)
--   rounds       repetitions per cache size           (3)
--   threads      reader threads                       (1)

local p = params{
  sizes = {0.25, 2},
  docs = 600000,
  doc_bytes = 1000,
  reads = 20000,
  working_set = 60,
  rounds = 3,
  threads = 1,
}

-- mongod refuses cacheSizeGB below 0.25; WiredTiger itself takes a smaller
-- cache_size in the engine configuration string, which quick runs with a
-- small data set use (sizes=0.03,0.25).
local function cache(gb)
  if gb < 0.25 then
    return { cacheSizeGB = 0.25, engineConfig = ("cache_size=%dMB"):format(math.floor(gb * 1024)) }
  end
  return { cacheSizeGB = gb, engineConfig = "" }
end

local ns = "bench.c"
local m = mongod.start(cache(p.sizes[1]))

step{ name = "load", run = function()
  return m:load{ ns = ns, docs = p.docs, doc_bytes = p.doc_bytes, batch = 1000 }
end }

for _, gb in ipairs(p.sizes) do
  m:restart(cache(gb))
  for round = 1, p.rounds do
    for _, ws in ipairs{ { label = p.working_set .. " MB", value = p.working_set .. "MB" },
                         { label = "all", value = 1.0 } } do
      host.drop_caches()
      step{ name = "reads " .. ws.label, cacheSizeGB = gb, round = round, run = function()
        return m:workload{ ns = ns, ops = p.reads, threads = p.threads,
                           mix = { read = 1 }, working_set = ws.value }
      end }
    end
  end
end

report.table{ by = "cacheSizeGB", title = "cache sweep: random reads by _id" }
