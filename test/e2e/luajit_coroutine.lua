-- arg[1] tables made inside a coroutine (line 5), resumed from line 9.
jit.off()
local co = coroutine.wrap(function(n)
  for _ = 1, n do
    local t = {}
    coroutine.yield(t)
  end
end)
for _ = 1, tonumber(arg[1]) do co(tonumber(arg[1])) end
