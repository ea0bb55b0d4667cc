-- burn() holds most of the CPU; arg[1] "on"/"off" for the JIT, arg[2] seconds.
if arg[1] == "off" then jit.off() else jit.on() end
local function burn(n)
  local s = 0
  for i = 1, n do s = s + i % 7 end
  return s
end
local t0, total = os.clock(), 0
while os.clock() - t0 < tonumber(arg[2]) do total = total + burn(200000) end
print(total > 0)
