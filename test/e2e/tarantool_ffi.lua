-- Run by tarantool: qsort sorts arg[1] ints with a Lua comparator (an FFI callback, lines 8-9) called from line 13, interpreted.
jit.off()
local prof = require('prof_luajit')
local ffi = require('ffi')
ffi.cdef[[void qsort(void *base, size_t nmemb, size_t size, int (*compar)(const void *, const void *));]]
local n = tonumber(arg[1])
local arr = ffi.new("int[?]", n)
local compare = ffi.cast("int (*)(const void *, const void *)", function(a, b)
  return ffi.cast("const int *", a)[0] - ffi.cast("const int *", b)[0] end)
for round = 1, 3 do
  for i = 0, n - 1 do arr[i] = (i * 7919) % n end
  local sorted = true
  ffi.C.qsort(arr, n, 4, compare)
  for i = 1, n - 1 do sorted = sorted and arr[i - 1] <= arr[i] end
  assert(sorted)
end
print(prof.enabled)
os.exit(0)
