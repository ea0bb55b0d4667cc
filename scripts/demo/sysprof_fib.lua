-- The sysprof RFC's example on stock Lua 5.4: a Lua fibonacci and a C one
-- (cfib.so, built from cfib.c), alternating for `seconds` of CPU time:
--   PROF_CPU=callgraph LD_PRELOAD=libprof.so lua5.4 -l prof_lua sysprof_fib.lua [seconds]
local c = require("cfib")

local function lua_payload(n)
  if n <= 1 then
    return n
  end
  return lua_payload(n - 1) + lua_payload(n - 2)
end

local seconds = tonumber(arg and arg[1]) or 10
local start_time = os.clock()
local i = 0
while os.clock() - start_time < seconds do
  if i % 2 == 0 then
    c.fib(20)
  else
    lua_payload(20)
  end
  i = i + 1
end
