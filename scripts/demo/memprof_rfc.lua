-- The memprof RFC's test.lua on stock Lua 5.4 (lines 3-12 are the RFC's):
local N = tonumber(arg and arg[1]) or 1e5 -- LD_PRELOAD=libprof.so lua5.4 -l prof_lua
local function append(str, rep)
    return string.rep(str, rep)
end

local t = {}
for _ = 1, N do
    table.insert(t,
        append('q', _)
    )
end
