-- Run by tarantool: arg[1] tables made at line 7, interpreted; prints whether the adapter is on.
jit.off()
local prof = require('prof_luajit')
print(prof.enabled, prof.reason)
local n = tonumber(arg[1])
local keep = {}
for i = 1, n do keep[i] = {} end
os.exit(0) -- as Tarantool scripts end: no lua_close, every block stays live
