-- A Lua program to attach to (test/attach_e2e.cpp): builds strings with
-- string.rep until the file named by arg[1] exists; then prints a checksum
-- of fixed work and exits 0.
local stop = arg[1]
local function exists(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end
print("ready")
io.stdout:flush()
local n = 0
while not exists(stop) do
  for _ = 1, 200 do n = n + #string.rep("ab", 5000, ",") end
end
local sum = 0
for i = 1, 1000 do sum = (sum * 31 + #string.rep("x", i)) % 1000003 end
print("checksum", sum)
