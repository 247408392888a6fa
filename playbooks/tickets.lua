-- tickets.lua: read tickets and their queue (see docs/playbooks.md).
--
-- Slow reads run from many threads while the read-ticket limit
-- (executionControlConcurrentReadTransactions) is set to each value in
-- turn. Each read is a count of the documents whose field `tag` equals a
-- random key: no document has the field and no index covers it, so every
-- read scans the whole collection while it holds a ticket. With fewer
-- tickets than threads the reads queue; with more, none does. For each
-- setting a line gives the longest queue seen (queueLength, read every
-- 0.1 s), how many reads queued and their mean wait, from serverStatus
-- queues.execution.read.normalPriority; the table has reads/s and latency.
--
-- Parameters: docs (100000), doc_bytes (1000), duration (10), threads (32),
-- tickets (comma list: 5,128).

local p = params{
  docs = 100000,
  doc_bytes = 1000,
  duration = 10,
  threads = 32,
  tickets = { 5, 128 },
}

local m = mongod.start{ cacheSizeGB = 1,
  setParameter = { executionControlConcurrencyAdjustmentAlgorithm = "fixedConcurrentTransactions" } }
step{ name = "load", run = function()
  return m:load{ ns = "bench.t", docs = p.docs, doc_bytes = p.doc_bytes }
end }

local q = "queues.execution.read.normalPriority."
for _, n in ipairs(p.tickets) do
  m:set_parameter("executionControlConcurrentReadTransactions", n)
  local r = step{ name = "slow reads", tickets = n, run = function()
    return m:workload{ ns = "bench.t", duration = p.duration, threads = p.threads, mix = { query = 1 },
                       query = { filter = { tag = "$key" }, count = true },
                       watch = { q .. "queueLength", q .. "addedToQueue", q .. "totalTimeQueuedMicros" } }
  end }
  local added, waited = r.watch[q .. "addedToQueue"], r.watch[q .. "totalTimeQueuedMicros"]
  local queued = added["end"] - added.start
  local wait = waited["end"] - waited.start
  local line = ("read tickets %d: queueLength max %d, %d of %d reads queued, mean wait %.1f ms"):format(
    n, r.watch[q .. "queueLength"].max, queued, r.total.count, queued > 0 and wait / queued / 1000 or 0)
  log(line)
end

report.table{ by = "tickets", title = "read tickets: slow reads" }
