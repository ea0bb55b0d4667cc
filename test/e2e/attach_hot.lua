-- A Lua program to attach to (test/attach_e2e.cpp): one function, hot_spin,
-- holds the CPU; it says "ready" from inside its loop (so its state and
-- frames exist before any attach), and runs until the file named by arg[1]
-- exists; then the program prints fixed work's checksum and whether a
-- debug hook is set (none may be left by a detach), and exits 0.
local stop = arg[1]

local said = false
local function hot_spin(n)
  local x = 0
  for i = 1, n do
    x = (x * 31 + i) % 1000003
  end
  if not said then
    said = true
    print("ready")
    io.stdout:flush()
  end
  return x
end

local sum = 0
while not io.open(stop) do -- (a file once it exists)
  sum = (sum + hot_spin(200000)) % 1000003
end
local fixed = 0
for i = 1, 1000 do fixed = (fixed * 31 + #string.rep("x", i)) % 1000003 end
print("checksum", fixed, "hook", debug.gethook())
