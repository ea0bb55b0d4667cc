-- The memprof RFC's example: strings built in a loop, some kept (a leak).
local function append(str, rep)
  return string.rep(str, rep)
end

local kept = {}
for i = 1, 10000 do
  local s = append("a", i % 100 + 1)
  if i % 10 == 0 then kept[#kept + 1] = s end
end
print(#kept)
