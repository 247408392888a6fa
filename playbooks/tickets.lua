-- tickets.lua: read tickets and their queue (see docs/playbooks.md).
--
-- Many threads read at once while the read-ticket limit
-- (executionControlConcurrentReadTransactions) is set to each value in turn.
-- For each, the step's reads/s and latency are in the table, and a log line
-- gives how many reads waited for a ticket and their mean wait, from
-- serverStatus queues.execution.read.normalPriority (addedToQueue,
-- totalTimeQueuedMicros). The sampler records queueLength and out every
-- interval: `wtd samples RUN --match queues.execution.read`.
--
-- Parameters: docs (100000), doc_bytes (1000), ops (40000), threads (32),
-- tickets (comma list: 5,128).

local p = params{
  docs = 100000,
  doc_bytes = 1000,
  ops = 40000,
  threads = 32,
  tickets = {5, 128},
}

local m = mongod.start{ cacheSizeGB = 1,
  setParameter = { executionControlConcurrencyAdjustmentAlgorithm = "fixedConcurrentTransactions" } }
step{ name = "load", run = function()
  return m:load{ ns = "bench.t", docs = p.docs, doc_bytes = p.doc_bytes }
end }

local function read_queue()
  return m:server_status().queues.execution.read.normalPriority
end

for _, n in ipairs(p.tickets) do
  m:set_parameter("executionControlConcurrentReadTransactions", n)
  local before = read_queue()
  step{ name = "reads", tickets = n, run = function()
    return m:workload{ ns = "bench.t", ops = p.ops, threads = p.threads, mix = { read = 1 } }
  end }
  local after = read_queue()
  local queued = after.addedToQueue - before.addedToQueue
  local waited = after.totalTimeQueuedMicros - before.totalTimeQueuedMicros
  log(("read tickets %d: %d of %d reads queued, mean wait %.3f ms"):format(
    n, queued, p.ops, queued > 0 and waited / queued / 1000 or 0))
end

report.table{ by = "tickets", title = "read tickets" }
