-- write_pressure.lua: many threads loading at once into a large and a small
-- cache (see docs/playbooks.md).
--
-- For each cache size a fresh server is loaded by `threads` threads in
-- batches. The table shows MB/s (as docs/s), batch latency, and the dirty
-- peak; `wtd show RUN` adds the pages evicted by application threads and the
-- time they spent evicting. The original saw, with a 2 GB cache, a dirty peak of
-- about 10% of the cache and 2 ms of application-thread eviction, and with a
-- 256 MB cache a dirty peak of 26 MB and 514 ms of it.
--
-- Parameters: sizes (GB, comma list: 2,0.25), docs (300000), doc_bytes (1000),
-- threads (8), batch (1000).

local p = params{
  sizes = {2, 0.25},
  docs = 300000,
  doc_bytes = 1000,
  threads = 8,
  batch = 1000,
}

for _, gb in ipairs(p.sizes) do
  local m = mongod.start{ cacheSizeGB = gb }
  step{ name = "write pressure", cacheSizeGB = gb, threads = p.threads, run = function()
    return m:load{ ns = "bench.w", docs = p.docs, doc_bytes = p.doc_bytes,
                   batch = p.batch, threads = p.threads }
  end }
  m:stop()
end

report.table{ by = "cacheSizeGB", title = "write pressure: concurrent batched inserts" }
