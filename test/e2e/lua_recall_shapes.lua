-- Stacks that differ only below frames a remembered walk could keep: the
-- same function at the same call site reached from different callers, a
-- coroutine resumed from different places (its own frames unchanged), nested
-- coroutines switching resumers, and an error that unwinds frames which are
-- then pushed again at the same depth. Each shape allocates at its top
-- (a table) after an allocation with another stack below (lua_recall.cpp).
local rounds = tonumber(arg and arg[1]) or 50

local function leaf() return {} end
local function shared() -- one call site (no tail call), many callers
  local t = leaf()
  return t
end
local function via_a() return (shared()) end
local function via_b() return (shared()) end

-- A coroutine allocating between yields, resumed from two callers.
local co = coroutine.create(function()
  while true do
    local t = {}
    coroutine.yield(t)
  end
end)
local function resume_from_a() return coroutine.resume(co) end
local function resume_from_b() return coroutine.resume(co) end

-- Nested: an outer coroutine resumes the inner one from two places.
local inner = coroutine.wrap(function()
  while true do coroutine.yield({}) end
end)
local outer = coroutine.wrap(function()
  local function step_a() return inner() end
  local function step_b() return inner() end
  while true do
    step_a()
    coroutine.yield({})
    step_b()
    coroutine.yield({})
  end
end)
local function drive_a() return outer() end
local function drive_b() return outer() end

-- Frames unwound by an error, then pushed again at the same depth.
local function then_fail()
  shared()
  error("x")
end
local function then_return() return (shared()) end

for _ = 1, rounds do
  via_a()
  via_b()
  resume_from_a()
  resume_from_b()
  local _ = {}
  resume_from_a()
  drive_a()
  drive_b()
  drive_a()
  local _ = {}
  drive_b()
  pcall(then_fail)
  pcall(then_return)
end
