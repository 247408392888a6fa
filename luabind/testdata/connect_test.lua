-- mongod.connect: the checks before a connection, the timeout, one-line
-- errors, and a direct connection to a server that advertises other hosts.
-- The Go test passes -p closed=<a closed loopback port> and -p fake=<URI of
-- a fake server that says it belongs to a replica set on 10.1.2.3>.
local p = params{ closed = 0, fake = "" }

local function fails(f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok, "expected an error")
  return tostring(e)
end
local function has(s, sub)
  assert(s:find(sub, 1, true), ("%q does not contain %q"):format(s, sub))
end

-- Options are checked first.
has(fails(mongod.connect, { uri = p.fake, tmeout = 1 }), 'unknown option "tmeout"; did you mean timeout? (allowed: timeout, uri)')
has(fails(mongod.connect, { uri = p.fake, timeout = "5" }), 'timeout must be a number, got string "5"')
has(fails(mongod.connect, { uri = p.fake, timeout = 0 }), "mongod.connect: timeout 0 seconds out of range (0, 3600]")
has(fails(mongod.connect, { uri = p.fake, timeout = 4000 }), "timeout 4000 seconds out of range")

-- URIs refused before anything is resolved or sent.
has(fails(mongod.connect, { uri = "mongodb+srv://cluster0.example.net/" }), "mongod.connect: connect: mongodb+srv:// URIs are refused")
has(fails(mongod.connect, { uri = "mongodb://127.0.0.1:1,127.0.0.1:2/" }), "the URI names 2 hosts")
has(fails(mongod.connect, { uri = p.fake .. "/?replicaSet=rs0" }), "URI option replicaSet is refused")

-- A closed port fails at once, in one line naming the address.
local e = fails(mongod.connect, { uri = "mongodb://127.0.0.1:" .. p.closed, timeout = 30 })
assert(e:match("^testdata/connect_test.lua:%d+: mongod.connect: connect 127%.0%.0%.1:" .. p.closed .. ": connection refused$"), e)

-- The fake server advertises 10.1.2.3: wtd stays on the address it was given.
local a = mongod.connect{ uri = p.fake, timeout = 2 }
assert(a.started == false, "attached")
assert(a:command{ ping = 1 }.ok == 1, "ping")
assert(type(a:command{ buildInfo = 1 }.version) == "string", "buildInfo")
a:stop()
