-- Run by tarantool: burn() holds most of the CPU for arg[1] seconds, interpreted.
jit.off()
local prof = require('prof_luajit')
local function burn(n)
  local s = 0
  for i = 1, n do s = s + i % 7 end
  return s
end
local t0, total = os.clock(), 0
while os.clock() - t0 < tonumber(arg[1]) do total = total + burn(200000) end
print(prof.enabled, total > 0)
os.exit(0)
