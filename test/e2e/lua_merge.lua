-- Guest stacks merged into host stacks (lua_e2e_merge.cpp): each section
-- allocates N empty tables, one block each, at its own line, reached
-- through another way of running Lua code. Keep the line numbers.
local N = tonumber(arg and arg[1]) or 1000
local function leaf() local t = {} return t end                        -- line 5
local function plain() for _ = 1, N do leaf() end end
local function from_c() string.gsub(string.rep("x", N), ".", function() local t = {} end) end -- line 7
local lazy = setmetatable({}, {__index = function() local t = {} return t end})   -- line 8
local function metamethod() for _ = 1, N do local _ = lazy.missing end end
local function coroutine_body() for _ = 1, N do local t = {} coroutine.yield() end end -- line 10
local function in_coroutine()
  local co = coroutine.wrap(coroutine_body)
  for _ = 1, N + 1 do co() end
end
plain()
from_c()
metamethod()
in_coroutine()
