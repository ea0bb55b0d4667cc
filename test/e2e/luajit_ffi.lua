-- FFI calls into C and C calling back into Lua: qsort with a Lua comparator,
-- arg[1] "on"/"off" for the JIT, arg[2] rounds; prints whether all sorted.
if arg[1] == "off" then jit.off() else jit.on() end
local ffi = require "ffi"
ffi.cdef [[
void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
double fabs(double x);
]]
local function compare(a, b)
  local x, y = ffi.cast("const int *", a)[0], ffi.cast("const int *", b)[0]
  return x < y and -1 or (x > y and 1 or 0)
end
local cmp = ffi.cast("int (*)(const void *, const void *)", compare)
local n, ok = 2000, true
local v = ffi.new("int[?]", n)
for round = 1, tonumber(arg[2]) do
  for i = 0, n - 1 do v[i] = (i * 7919 + round) % n end
  ffi.C.qsort(v, n, 4, cmp)
  for i = 1, n - 1 do ok = ok and v[i - 1] <= v[i] and ffi.C.fabs(-i) == i end
end
cmp:free()
print(ok)
