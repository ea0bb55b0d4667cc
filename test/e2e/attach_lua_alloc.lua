-- A Lua program to attach to for memory (test/attach_e2e.cpp), in lua5.x
-- or luajit. Its state is made, and works, before it says "ready". Then,
-- for each line on stdin:
--   "spin"   runs spin_here for about half a second of CPU time (a CPU
--            sample there lets the agent find the state, and put its
--            allocator wrapper in), and says "spun";
--   "round"  makes exactly 1000 empty tables in make_tables, one
--            allocation each (kept in `slots`, made 1000 long before
--            "ready": it never grows), and says "done N", N the rounds so
--            far;
--   "q"      prints a checksum, equal in every run, and ends with status 0.
-- arg[1] "nojit": LuaJIT's compiler off (each table then made by the
-- interpreter, in make_tables' frame).
if arg[1] == "nojit" and jit then jit.off() end

local slots = {}
for i = 1, 1000 do slots[i] = false end
local rounds = 0

local function make_tables(n)
  for i = 1, n do
    slots[i] = {}
  end
end

local function spin_here()
  local x, t0 = 0, os.clock()
  while os.clock() - t0 < 0.5 do
    for i = 1, 10000 do x = (x * 31 + i) % 1000003 end
  end
  return x
end

make_tables(10)
print("ready")
io.stdout:flush()
for line in io.lines() do
  if line == "spin" then
    spin_here()
    print("spun")
  elseif line == "round" then
    make_tables(1000)
    rounds = rounds + 1
    print("done " .. rounds)
  elseif line == "q" then
    break
  end
  io.stdout:flush()
end
print("slots", #slots, "rounds", rounds)
