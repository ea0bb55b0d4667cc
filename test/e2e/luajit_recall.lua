-- Stack shapes for the allocator wrapper's remembered walks (frame_trail.h),
-- each allocating at changing depths: recursion (also past the frame
-- limit), coroutines nested and wrapped, vararg calls, metamethods, pcall
-- and errors, closures made and dropped (two prototypes taking turns at
-- one address), C re-entering Lua (string.gsub, table.sort), FFI
-- callbacks; arg[1] "on"/"off" for the JIT, arg[2] rounds.
if arg[1] == "off" then jit.off() else jit.on() end
local ffi = require "ffi"
ffi.cdef [[
void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
]]
local rounds = tonumber(arg[2])
local keep = {}

local function tree(depth)
  if depth == 0 then return {} end
  return {tree(depth - 1), tree(depth - 1)}
end

local function deep(n)
  if n == 0 then return {n} end
  local t = deep(n - 1)
  return {t}
end

local function varargs(...)
  local t = {...}
  if #t < 4 then return varargs(1, ...) end
  return t
end

local meta = setmetatable({}, {__index = function(_, k) return {k} end})

local function worker(n)
  for i = 1, n do
    coroutine.yield(tree(i % 4))
    local inner = coroutine.wrap(function()
      coroutine.yield(varargs(i))
      coroutine.yield(meta[i])
    end)
    keep[#keep % 64 + 1] = {inner(), inner()}
  end
  return {}
end

local function compare(a, b)
  local x, y = ffi.cast("const int *", a)[0], ffi.cast("const int *", b)[0]
  keep[#keep % 64 + 1] = {x}
  return x < y and -1 or (x > y and 1 or 0)
end
local cmp = ffi.cast("int (*)(const void *, const void *)", compare)
local v = ffi.new("int[?]", 64)

-- Closures of two prototypes, made anew and dropped: after a collection
-- the next one may take the last one's address, called from the same line.
local makers = {
  function() return function() for i = 1, 100 do keep[6] = {i} end end end,
  function() return function() for i = 1, 100 do keep[6] = {i, i} end end end,
}

for round = 1, rounds do
  local co = coroutine.create(worker)
  while coroutine.status(co) ~= "dead" do
    local ok, t = coroutine.resume(co, 6)
    assert(ok, t)
    keep[round % 64 + 1] = t
  end
  keep[1] = deep(round % 80)
  local ok = pcall(function() local t = tree(3) error({t}) end)
  assert(not ok)
  local f = function(x) return {x, round} end
  keep[2] = f(round)
  keep[3] = ("x"):rep(round % 50 + 1):gsub("x", function(c) return c .. round end)
  local list = {5, 3, 1, 4}
  table.sort(list, function(a, b) keep[4] = {a} return a < b end)
  for i = 0, 63 do v[i] = (i * 37 + round) % 64 end
  ffi.C.qsort(v, 64, 4, cmp)
  if round % 50 == 0 then collectgarbage() end
  for k = 1, 8 do
    local made = makers[k % 2 + 1]()
    made()
    made = nil
    collectgarbage()
  end
end
cmp:free()
print("done")
