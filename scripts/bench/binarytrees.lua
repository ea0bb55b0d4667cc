-- binary-trees: allocation-heavy tree building and walking (arg: depth).
local function build(depth)
  if depth == 0 then return {} end
  depth = depth - 1
  return { build(depth), build(depth) }
end

local function check(tree)
  if tree[1] then return 1 + check(tree[1]) + check(tree[2]) end
  return 1
end

local n = tonumber(arg and arg[1]) or 15
local max_depth = math.max(6, n)
print(("stretch tree of depth %d check: %d"):format(max_depth + 1, check(build(max_depth + 1))))
local long_lived = build(max_depth)
for depth = 4, max_depth, 2 do
  local iterations = 2 ^ (max_depth - depth + 4)
  local sum = 0
  for _ = 1, iterations do sum = sum + check(build(depth)) end
  print(("%d trees of depth %d check: %d"):format(iterations, depth, sum))
end
print(("long lived tree of depth %d check: %d"):format(max_depth, check(long_lived)))
