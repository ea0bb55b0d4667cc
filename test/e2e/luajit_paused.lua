-- arg[1] tables made through a() (line 7), then, recording paused, one
-- through b(), and, recording resumed, arg[1] - 1 more in the same call of
-- b (line 12): the module's walks go on while the agent records nothing.
jit.off()
local ffi = require("ffi")
local function make() return {} end
local function a() local t = make() return t end
local function b(n)
  local ffi_c = ffi.C
  local t
  for i = 1, n do
    t = make()
    if i == 1 then ffi_c.prof_start() end
  end
  return t
end
ffi.cdef [[
void prof_start(void);
void prof_stop(void);
]]
local n = tonumber(arg[1])
for _ = 1, n do a() end
ffi.C.prof_stop()
b(n)
