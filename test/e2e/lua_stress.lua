-- Stress for the Lua 5.4 adapter: binary trees, coroutines (nested, wrapped,
-- dying with errors), errors unwinding through tail calls and message
-- handlers, fresh chunks from load() (prototypes born and freed), and
-- collector mode switches, for `seconds` of CPU time (first argument).
local seconds = tonumber(arg and arg[1]) or 20

local function bottom_up(depth)
  if depth == 0 then return {} end
  depth = depth - 1
  return { bottom_up(depth), bottom_up(depth) }
end

local function check(tree)
  if tree[1] then return 1 + check(tree[1]) + check(tree[2]) end
  return 1
end

local function trees(n)
  local sum = 0
  for _ = 1, n do sum = sum + check(bottom_up(8)) end
  return sum
end

local function generator(n)
  return coroutine.wrap(function()
    for i = 1, n do coroutine.yield(string.rep("g", i % 50 + 1)) end
  end)
end

local function nested_coroutines()
  local outer = coroutine.create(function()
    local total = 0
    for s in generator(20) do
      local inner = coroutine.create(function(x)
        coroutine.yield(#x)
        error("inner " .. x)
      end)
      total = total + select(2, coroutine.resume(inner, s))
      coroutine.resume(inner)
      coroutine.yield(total)
    end
    return total
  end)
  while coroutine.status(outer) ~= "dead" do coroutine.resume(outer) end
end

local function failing(depth)
  if depth == 0 then error({ depth = depth }) end
  return failing(depth - 1)
end

local function handler(e)
  return string.rep("h", 10) .. tostring(e)
end

local function errors()
  for i = 1, 20 do
    pcall(failing, i)
    xpcall(failing, handler, i % 5)
    pcall(coroutine.wrap(function() failing(3) end))
  end
end

local function fresh_chunks(n)
  for i = 1, n do
    local f = load("local a = ... return function(b) return a .. b .. ('c'):rep(" .. i .. ") end",
                   "=fresh")
    f("x")("y")
  end
end

local modes = { "incremental", "generational" }
local round = 0
local start = os.clock()
while os.clock() - start < seconds do
  round = round + 1
  trees(4)
  nested_coroutines()
  errors()
  fresh_chunks(10)
  -- pcall: Lua 5.3 has no collector modes (the recall tests run it too).
  if round % 50 == 0 then pcall(collectgarbage, modes[math.floor(round / 50) % 2 + 1]) end
  if round % 7 == 0 then collectgarbage("step") end
end
print("rounds", round)
