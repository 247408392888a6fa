-- WiredTiger strings and server parameters that name files, libraries,
-- stores or other hosts are refused on every path a playbook has, before
-- any server sees them. The Go test passes -p logdir= and -p statdir=,
-- two empty directories, and checks that they stay empty.
local p = params{ logdir = "", statdir = "" }

local function fails(f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok, "expected an error")
  e = tostring(e)
  assert(not e:find(p.logdir, 1, true) and not e:find(p.statdir, 1, true), "the error quotes the directory: " .. e)
  return e
end
local function has(s, sub)
  assert(s:find(sub, 1, true), ("%q does not contain %q"):format(s, sub))
end

-- A file the playbook writes in its run directory is no library to load.
local so = assert(io.open("x.so", "w"))
so:write("not a library")
so:close()
local journal = 'log=(enabled=true,"path"="' .. p.logdir .. '",file_max=100KB,prealloc=false)'
local stats = 'statistics=(fast),statistics_log=(wait=1,"path"="' .. p.statdir .. '")'
local tracking = 'operation_tracking=(enabled=true,"path"="' .. p.statdir .. '")'

-- At start: engineConfig, setParameter, args.
has(fails(mongod.start, { engineConfig = '"extensions"=["x.so"]' }),
  'mongod.start: validate mongod settings: engineConfig: the WiredTiger key "extensions" is refused: it loads shared libraries')
has(fails(mongod.start, { engineConfig = journal }), 'engineConfig: the WiredTiger key "log.path" is refused')
has(fails(mongod.start, { engineConfig = "log.path=" .. p.logdir }), 'engineConfig: the WiredTiger key "log.path" is refused')
has(fails(mongod.start, { engineConfig = stats }), 'engineConfig: the WiredTiger key "statistics_log.path" is refused')
has(fails(mongod.start, { engineConfig = "log=(enabled=true" }), "engineConfig: it does not parse as a WiredTiger configuration string")
has(fails(mongod.start, { setParameter = { wiredTigerEngineRuntimeConfig = stats } }),
  'setParameter wiredTigerEngineRuntimeConfig: the WiredTiger key "statistics_log.path" is refused')
has(fails(mongod.start, { args = { "--setParameter", "wiredTigerEngineRuntimeConfig=" .. journal } }),
  'args[2] --setParameter wiredTigerEngineRuntimeConfig: the WiredTiger key "log.path" is refused')
has(fails(mongod.start, { args = { "--wiredTigerIndexConfigString", 'source="file:' .. p.statdir .. '/i.wt"' } }),
  'args[2] --wiredTigerIndexConfigString: the WiredTiger key "source" is refused')
has(fails(mongod.start, { setParameter = { diagnosticDataCollectionDirectoryPath = p.statdir } }),
  "setParameter diagnosticDataCollectionDirectoryPath is refused: its value is a path")
has(fails(mongod.start, { setParameter = { cloudFreeMonitoringEndpointURL = "http://10.1.2.3/" } }),
  "setParameter cloudFreeMonitoringEndpointURL is refused")
has(fails(mongod.start, { args = { "--enableFreeMonitoring", "on" } }), "args[1] --enableFreeMonitoring is refused")
has(fails(mongod.start, { setParameter = { ldapServers = "10.1.2.3" } }), "setParameter ldapServers is refused")

local m = mongod.start{ cacheSizeGB = 0.25 }
assert(m.name == "m1", "a refused start started a server: this one is " .. m.name)
local pid = m.pid

-- At runtime: reconfigure, set_parameter, command, restart.
has(fails(m.reconfigure, m, tracking), 'reconfigure: the WiredTiger key "operation_tracking.path" is refused')
has(fails(m.reconfigure, m, "log=(path=" .. p.logdir .. ")"), 'reconfigure: the WiredTiger key "log.path" is refused')
has(fails(m.set_parameter, m, "wiredTigerEngineRuntimeConfig", '"extensions"=["x.so"]'),
  'set_parameter: setParameter wiredTigerEngineRuntimeConfig: the WiredTiger key "extensions" is refused')
has(fails(m.set_parameter, m, "diagnosticDataCollectionDirectoryPath", p.statdir),
  "set_parameter: setParameter diagnosticDataCollectionDirectoryPath is refused")
has(fails(m.command, m, "setParameter", { wiredTigerEngineRuntimeConfig = tracking }),
  'command setParameter: setParameter wiredTigerEngineRuntimeConfig: the WiredTiger key "operation_tracking.path" is refused')
has(fails(m.command, m, "setParameter", { WiredTigerEngineRuntimeConfig = tracking, logLevel = 0 }),
  'setParameter WiredTigerEngineRuntimeConfig: the WiredTiger key "operation_tracking.path" is refused')
has(fails(m.command, m, "setParameter", { cloudFreeMonitoringEndpointURL = "http://10.1.2.3/" }),
  "setParameter cloudFreeMonitoringEndpointURL is refused")
has(fails(m.command, m, "setFreeMonitoring", { action = "enable" }), "command setFreeMonitoring: setFreeMonitoring is refused")
has(fails(m.command, m, "create", { storageEngine = { wiredTiger = { configString = 'type="file:' .. p.statdir .. '/c"' } } }, "test"),
  'command create: storageEngine.wiredTiger.configString: the WiredTiger key "type" is refused')
has(fails(m.restart, m, { engineConfig = journal }), 'restart m1: validate mongod settings: engineConfig: the WiredTiger key "log.path" is refused')
has(fails(m.restart, m, { setParameter = { wiredTigerEngineRuntimeConfig = tracking } }),
  'setParameter wiredTigerEngineRuntimeConfig: the WiredTiger key "operation_tracking.path" is refused')
has(fails(m.restart, m, { args = { "--setParameter", "wiredTigerEngineRuntimeConfig=" .. stats } }),
  'args[2] --setParameter wiredTigerEngineRuntimeConfig: the WiredTiger key "statistics_log.path" is refused')

-- The same process answers, and takes what is allowed.
assert(m.pid == pid, "the server was restarted or died: pid " .. tostring(m.pid))
m:reconfigure("eviction_target=70,eviction=(threads_max=6)")
assert(m:command("setParameter", { wiredTigerEngineRuntimeConfig = "eviction_trigger=90" }).ok == 1, "an allowed setParameter")
m:stop()
