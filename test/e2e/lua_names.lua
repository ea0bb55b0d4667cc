-- Lua functions defined in each form profilers read names from, each making
-- N tables (one allocation each) at its own line; then `spin` burns CPU at
-- one line for the given CPU seconds (test/lua_e2e_names.cpp).
local M = {}

function M.make_module(n)
  for _ = 1, n do local t = {} end
end

local function make_local(n)
  for _ = 1, n do local t = {} end
end

local make_assigned = function(n)
  for _ = 1, n do local t = {} end
end

local object = {}
function object:make_method(n)
  for _ = 1, n do local t = {} end
end

local function repeated(n)
  for i = 1, n do local s = string.rep("x", 100 + i) end
end

local function spin(seconds)
  local stop, x = os.clock() + seconds, 0
  while os.clock() < stop do for i = 1, 100000 do x = x + i end end
  return x
end

local n, seconds = tonumber(arg[1]), tonumber(arg[2])
M.make_module(n)
make_local(n)
make_assigned(n)
object:make_method(n)
for _ = 1, n do local t = {} end
repeated(n)
spin(seconds)
