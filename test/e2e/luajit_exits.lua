-- exits() leaves its trace on every other iteration, and no side trace is
-- made for that exit (hotexit): the VM's exit handler runs half the time.
-- arg[1] seconds.
jit.on()
jit.opt.start("hotexit=65000")
local function exits(n)
  local t = {}
  for i = 1, n do
    if i % 2 == 0 then t[#t + 1] = "s" .. i else t[#t + 1] = i end
  end
  return t
end
local t0 = os.clock()
while os.clock() - t0 < tonumber(arg[1]) do exits(10000) end
print(true)
