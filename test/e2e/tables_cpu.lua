local function leaf(n)
  local x = 0
  for i = 1, n do x = x + i % 7 end
  return x
end
local function down(d, n)
  if d == 0 then return leaf(n) end
  return down(d - 1, n) + 0
end
-- CPU in leaf() (lines 1-5) under 25 frames of down(): 24 calls from line 8.
local t = 0
for _ = 1, 60 do t = t + down(24, 200000) end
print(t)
