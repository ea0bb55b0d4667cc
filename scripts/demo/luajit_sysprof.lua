-- The sysprof fixture's payload on stock LuaJIT, JIT on: a Lua fibonacci
-- and table churn, alternating for `seconds` of CPU time:
--   PROF_CPU=callgraph LD_PRELOAD=libprof.so luajit -l prof_luajit luajit_sysprof.lua [seconds]
local function lua_payload(n)
  if n <= 1 then return n end
  return lua_payload(n - 1) + lua_payload(n - 2)
end

local function churn(n)
  local t = {}
  for i = 1, n do t[i] = { i } end
  return #t
end

local seconds = tonumber(arg and arg[1]) or 5
local start_time = os.clock()
local i = 0
while os.clock() - start_time < seconds do
  if i % 2 == 0 then churn(2000) else lua_payload(18) end
  i = i + 1
end
