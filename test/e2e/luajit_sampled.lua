-- arg[1] tables made at line 5 and dropped at once, JIT off; the VM frees every block at its end (lua_close).
jit.off()
require "prof_luajit"
local keep
for _ = 1, tonumber(arg[1]) do keep = {} end
collectgarbage()
