-- coroutine.close runs a suspended coroutine's pending __close handler,
-- on the coroutine's stack: its strings are made inside the handler.
local function mk(n) return string.rep("c", n) end
local co = coroutine.create(function()
  local guard <close> = setmetatable({}, {__close = function()
    for i = 1, 3 do mk(600 + i) end
  end})
  coroutine.yield()
end)
coroutine.resume(co)
assert(coroutine.close(co))
