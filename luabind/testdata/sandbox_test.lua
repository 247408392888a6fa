-- The sandbox: what a playbook may and may not do.
local function refused(name, f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok, name .. " did not fail")
  assert(e:find(name .. " is not available in a playbook", 1, true), name .. ": " .. e)
  assert(e:match("^testdata/sandbox_test.lua:%d+: "), name .. " error lacks file:line: " .. e)
end

refused("os.execute", os.execute, "true")
refused("os.exit", os.exit, 0)
refused("os.remove", os.remove, "x")
refused("os.rename", os.rename, "x", "y")
refused("os.setenv", os.setenv, "A", "b")
refused("os.tmpname", os.tmpname)
refused("io.popen", io.popen, "ls")
refused("io.read", io.read)
refused("io.input", io.input, "/etc/passwd")
refused("io.output", io.output, "/tmp/x")
refused("io.tmpfile", io.tmpfile)
refused("dofile", dofile, "/etc/passwd")
refused("loadfile", loadfile, "/etc/passwd")
refused("require", require, "os")
refused("module", module, "m")

assert(debug == nil, "no debug library")
assert(coroutine == nil, "no coroutine library")
assert(package == nil, "no package library")
assert(channel == nil, "no channel library")
assert(io.stdout == nil and io.stdin == nil, "no standard files")

-- What is allowed.
assert(type(os.time()) == "number", "os.time")
assert(type(os.clock()) == "number", "os.clock")
assert(os.date("%Y"):match("^%d%d%d%d$"), "os.date")
assert(os.getenv("WTD_NO_SUCH_VARIABLE") == nil, "os.getenv")
assert(loadstring("return 1 + 1")() == 2, "loadstring of a string")
assert(string.format("%.2f", 0.25) == "0.25" and math.floor(2.5) == 2 and table.concat({ "a", "b" }, ",") == "a,b", "libs")

-- io.open: only inside the run's directory (relative paths are relative to it).
local function outside(path, mode)
  local ok, e = pcall(io.open, path, mode)
  assert(not ok, path .. " opened")
  assert(e:find("is outside the run's directory", 1, true), path .. ": " .. e)
end
outside("/etc/passwd")
outside("../escape.txt", "w")
outside("notes/../../escape.txt", "w")
outside("etc-link/passwd") -- a symbolic link to /etc, made by the Go test
local ok, e = pcall(io.lines, "/etc/passwd")
assert(not ok and e:find("outside the run's directory", 1, true), "io.lines outside: " .. tostring(e))

local f, err = io.open("no-such-dir/n.txt", "w")
assert(f == nil and type(err) == "string", "a file that cannot be opened: nil, message")
local g = assert(io.open("top.txt", "w"))
g:write("line 1\n", "line 2\n")
g:close()
local lines = {}
for l in io.lines("top.txt") do lines[#lines + 1] = l end
assert(#lines == 2 and lines[2] == "line 2", "io.lines read back")
local r = assert(io.open("top.txt"))
assert(r:read("*a") == "line 1\nline 2\n", "read back")
r:close()

io.write("written ", 42, "\n")
print("printed", 1, true)
