-- Makes exactly `ntables` empty tables and `nstrings` distinct strings of 40
-- characters (one 65-byte block each: 24 of header, 40, the NUL), all kept,
-- then collects the garbage and leaves without closing the state, so what
-- is kept is what leaks.
local ntables, nstrings = tonumber(arg[1]), tonumber(arg[2])
local tables, strings = {}, {}

local function make_tables(n)
  for i = 1, n do tables[i] = {} end
end

local function make_strings(n)
  for i = 1, n do strings[i] = string.format("%040d", i) end
end

make_tables(ntables)
make_strings(nstrings)
collectgarbage()
os.exit(0, false)
