-- Run by tarantool: arg[1] tables made at line 7, the JIT on or off (arg[2]); prints whether the adapter is on.
if arg[2] == "on" then jit.on() else jit.off() end
local prof = require('prof_luajit')
print(prof.enabled, prof.reason)
local n = tonumber(arg[1])
local keep = {}
for i = 1, n do keep[i] = {} end
os.exit(0) -- as Tarantool scripts end: no lua_close, every block stays live
