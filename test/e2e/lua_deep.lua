-- Recursion to a known depth (arg[1]) that allocates at the bottom, for the
-- guest stack limit test: down(n) calls itself (not a tail call, which would
-- replace its frame) until n is 0, then makes 5 strings of 777 bytes.
local strings = {}
local function down(n)
  if n == 0 then
    for i = 1, 5 do
      strings[i] = string.rep("d", 777)
    end
    return 0
  end
  local r = down(n - 1)
  return r
end
down(tonumber(arg[1]))
