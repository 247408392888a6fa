-- create_index and dated documents: a TTL index deletes what expired.
local m = mongod.start{ setParameter = { ttlMonitorSleepSecs = 1 } }
local now = os.time()

local name = m:create_index{ ns = "t.old", key = "createdAt", expireAfterSeconds = 1 }
assert(name == "createdAt_1", "index name " .. tostring(name))
m:load{ ns = "t.old", docs = 300, doc_bytes = 200, date = { field = "createdAt", from = now - 100, to = now - 50 } }

m:create_index{ ns = "t.later", key = { expireAt = 1 }, expireAfterSeconds = 0, name = "exp" }
m:load{ ns = "t.later", docs = 300, doc_bytes = 200, date = { field = "expireAt", from = now + 1000, to = now + 2000 } }
local w = m:workload{ ns = "t.later", ops = 50, mix = { insert = 1 }, date = { field = "expireAt", from = now + 1000, to = now + 1000 } }

m:create_index{ ns = "t.u", key = { {"a", 1}, {"b", -1} }, unique = true }
local ix = m:command("listIndexes", { listIndexes = "later" }, "t").cursor.firstBatch
local seen = {}
for _, i in ipairs(ix) do seen[i.name] = i end
assert(seen.exp and seen.exp.expireAfterSeconds == 0, "exp index")
local ux = m:command("listIndexes", { listIndexes = "u" }, "t").cursor.firstBatch
assert(#ux == 2 and ux[2].name == "a_1_b_-1" and ux[2].unique, "compound unique index")

-- A loaded document: its date lies in the window, its size is doc_bytes.
local doc = m:command("find", { find = "later", filter = { _id = 7 } }, "t").cursor.firstBatch[1]
assert(doc.expireAt >= (now + 1000) * 1000 and doc.expireAt <= (now + 2000) * 1000, "expireAt " .. tostring(doc.expireAt))
local st = m:collection_stats("t.later")
assert(st.count == 350 and math.abs(st.avg_obj_size - 200) < 1, "later: " .. st.count .. " docs of " .. st.avg_obj_size)
-- An inserted one carries the date given.
local ins = m:command("find", { find = "later", filter = { _id = 300 } }, "t").cursor.firstBatch[1]
assert(ins.expireAt == (now + 1000) * 1000, "inserted expireAt " .. tostring(ins.expireAt))

-- The TTL monitor deletes the expired ones, and only those.
local deadline = os.time() + 20
while m:collection_stats("t.old").count > 0 and os.time() < deadline do sleep(0.2) end
assert(m:collection_stats("t.old").count == 0, "expired documents left: " .. m:collection_stats("t.old").count)
assert(m:collection_stats("t.later").count == 350, "documents not yet due were deleted")
assert(m:server_status().metrics.ttl.deletedDocuments >= 300, "ttl.deletedDocuments")
