-- Allocations at known places, for the end-to-end test: each mk(n) below
-- makes one string of a size nothing else makes (400 + the case number).
local function mk(n)
  return string.rep("z", n)
end
local function via_tail(n)
  return mk(n)
end
local function boom()
  error("boom")
end
local function handler(e)
  mk(404)
  return e
end
local co = coroutine.create(function()
  mk(401)
end)
coroutine.resume(co)
local w = coroutine.wrap(function()
  mk(402)
end)
w()
pcall(boom)
mk(403)
xpcall(boom, handler)
via_tail(405)
