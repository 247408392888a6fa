-- step{}: recorded steps with labels, engine results and failures.
local m = mongod.start{ cacheSizeGB = 0.25 }
m:load{ ns = "bench.c", docs = 2000, doc_bytes = 500 }

for round = 1, 2 do
  host.drop_caches()
  local r = step{ name = "reads", round = round, cacheSizeGB = 0.25, run = function()
    return m:workload{ ops = 1000, mix = { read = 1 } }
  end }
  assert(r.total.count == 1000, "step returns the workload's result")
end

local plain = step{ name = "plain", server = m, ns = "bench.c", note = "x", run = function()
  return { total = { count = 5, ops_per_sec = 10 } }
end }
assert(plain.total.count == 5, "plain result")

local ok, e = pcall(step, { name = "boom", run = function() error("kaboom") end })
assert(not ok, "a failing run fails step")
assert(e:match("^testdata/step_test.lua:%d+: kaboom$"), "the error keeps its file:line: " .. e)

local steps = report.steps()
assert(#steps == 4, "4 steps")
assert(steps[1].name == "reads" and steps[1].labels.round == 1 and steps[1].status == "ok", "step 1")
assert(steps[1].result.ops.read.count == 1000, "recorded result")
assert(steps[1].settings.cache_max_bytes == 268435456, "settings")
assert(steps[1].settings.cacheSizeGB == 0.25, "the knobs in force by their options' names: " .. tostring(steps[1].settings.cacheSizeGB))
assert(steps[1].provenance.drop_tried == true, "drop_caches is in the provenance")
assert(steps[4].status == "failed", "step 4 failed")

report.table{ by = "cacheSizeGB", title = "step test" }
