-- report.table without a server: steps whose results are plain tables.
local function result(ops_per_sec)
  return { total = { count = 10, ops_per_sec = ops_per_sec, p50_micros = 50, p99_micros = 90 } }
end
step{ name = "alpha", round = 1, size = "s", run = function() return result(100) end }
step{ name = "alpha", round = 2, size = "s", run = function() return result(120) end }
local v = step{ name = "beta", round = 1, size = "l", run = function() return 42 end }
assert(v == 42, "step returns what run returned")

report.table{ by = "size", title = "report test" }

local steps = report.steps()
assert(#steps == 3, "3 steps")
assert(steps[1].name == "alpha" and steps[1].labels.round == 1 and steps[1].status == "ok", "step 1")
assert(steps[2].result.total.ops_per_sec == 120, "step 2 result")
assert(steps[3].result == 42, "step 3 result")
assert(type(steps[3].start) == "string", "times are RFC 3339 text")

local ok, e = pcall(report.table, { bye = "x" })
assert(not ok and e:find('unknown option "bye"; did you mean by? (allowed: by, title, verdict)', 1, true), tostring(e))
