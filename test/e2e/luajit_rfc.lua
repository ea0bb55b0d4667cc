jit.off()
-- the memprof RFC's example (LuaJIT memprof RFC v2), misc.memprof left out; arg[1] strings.
local function append(str, rep)
    return string.rep(str, rep)
end

local t = {}
for _ = 1, tonumber(arg[1]) do
    table.insert(t,
        append('q', _)
    )
end
