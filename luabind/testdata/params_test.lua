-- params{}: defaults typed by the default, overridden with -p (the Go test
-- passes docs=5 verbose=1 label="hello world" sizes=0.25,2 modes="x, y" hex=0x10).
local p = params{ docs = 600000, rate = 1.5, verbose = false, quiet = false, label = "x",
  sizes = { 0.25, 0.5 }, modes = { "a" }, empty = {}, hex = 1 }

assert(p.docs == 5 and type(p.docs) == "number", "docs " .. tostring(p.docs))
assert(p.rate == 1.5, "rate kept its default")
assert(p.verbose == true, "verbose=1 is true")
assert(p.quiet == false, "quiet kept false")
assert(p.label == "hello world", "label " .. p.label)
assert(#p.sizes == 2 and p.sizes[1] == 0.25 and p.sizes[2] == 2, "sizes")
assert(type(p.sizes[2]) == "number", "list items of a number list are numbers")
assert(#p.modes == 2 and p.modes[1] == "x" and p.modes[2] == "y", "modes")
assert(type(p.empty) == "table" and #p.empty == 0, "empty list")
assert(p.hex == 16, "0x10 is 16")

local ok, e = pcall(params, { other = 1 })
assert(not ok and e:find("params: called twice", 1, true), "second params call: " .. tostring(e))
