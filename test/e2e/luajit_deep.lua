-- burn() runs 200 Lua calls deep, deeper than a CPU sample's walk keeps,
-- and holds most of the CPU; arg[1]: seconds.
jit.off()
local function burn(n)
  local s = 0
  for i = 1, n do s = s + i * 3 end
  return s
end
local function dive(depth, seconds)
  if depth > 0 then return dive(depth - 1, seconds) + 0 end
  local t0, total = os.clock(), 0
  while os.clock() - t0 < seconds do total = total + burn(200000) end
  return total
end
print(dive(200, tonumber(arg[1])) > 0)
