-- host.* on a fixture /proc (Go test): 16384 kB memory, 2048 kB Cached, no
-- sys/vm/drop_caches.
local d = host.drop_caches()
assert(d.dropped == false, "drop_caches cannot happen without sys/vm/drop_caches")
assert(type(d.reason) == "string" and #d.reason > 0, "reason: " .. tostring(d.reason))
assert(d.cached_before == 2048 * 1024, "cached_before " .. tostring(d.cached_before))
assert(d.cached_after == 2048 * 1024, "cached_after " .. tostring(d.cached_after))

local m = host.meminfo()
assert(m.mem_total == 16384 * 1024, "mem_total " .. tostring(m.mem_total))
assert(m.mem_available == 8192 * 1024, "mem_available")
assert(m.cached == 2048 * 1024, "cached")
assert(m.dirty == 0, "absent fields are 0")

local f = host.facts()
assert(f.mem_total_bytes == 16384 * 1024, "facts from the same host")
assert(type(f.logical_cores) == "number", "logical_cores")
assert(type(f.virtualization) == "table", "virtualization")
assert(type(f.disk) == "table", "disk")
