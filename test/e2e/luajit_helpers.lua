-- helpers() spends its time in the interpreter's helper routines, which `%`
-- and math.floor call (JIT off). arg[1] seconds.
jit.off()
local function helpers(n)
  local s = 0
  for i = 1, n do s = s + (i % 7) + math.floor(i / 3) + (i * 1.5) % 2.5 end
  return s
end
local t0 = os.clock()
while os.clock() - t0 < tonumber(arg[1]) do helpers(100000) end
print(true)
