-- An HTTP service for haproxy_e2e.cpp, loaded with `lua-load` and no
-- require of the adapter: each request makes 20 strings of 1001 to 1020
-- bytes (one 24 + n + 1 byte block each) in `build`, then answers "ok".
-- Keep the line numbers.
local function build(parts)
  for i = 1, 20 do parts[i] = string.rep("s", 1000 + i) end  -- line 6
  return parts
end

core.register_service("strings", "http", function(applet)
  local parts = build({})                                     -- line 11
  local body = "ok " .. #parts .. "\n"
  applet:set_status(200)
  applet:add_header("content-length", tostring(#body))
  applet:start_response()
  applet:send(body)
end)
