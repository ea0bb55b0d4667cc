-- arg[1] tables made at line 6, with the JIT on or off (arg[2]); prints the bytes the VM held before the adapter, then at the end.
local n, jit_mode = tonumber(arg[1]), arg[2]
if jit_mode == "off" then jit.off() else jit.on() end
local prof = require "prof_luajit"
local keep = {}
for i = 1, n do keep[i] = {} end
io.write(1e15, " ", 1e15, "\n") -- sizes the number buffer: the write below allocates nothing
io.write(prof.bytes_before, " ", collectgarbage("count") * 1024, "\n")
io.stdout:flush()
os.exit(0) -- no lua_close: every block stays live
