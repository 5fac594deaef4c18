-- wrk script for figure 5: every request submits a new tool call (a unique toolCallId), the n-th
-- hundred calls of a round to the run bench-<tag>-<n> (the server starts those runs ahead).
-- Usage: wrk ... -s bench/wrk_tool_call.lua <url> -- <agent token> <round tag>
local counter = 0
local tag = "r"
local token = ""
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

function init(args)
  token = args[1] or ""
  tag = args[2] or "r"
  wrk.method = "POST"
  wrk.headers["content-type"] = "application/json"
  wrk.headers["authorization"] = "Bearer " .. token
end

function request()
  counter = counter + 1
  local id = "call_" .. tag .. "_" .. tostring(tid) .. "_" .. counter
  local path = "/v1/runs/bench-" .. tag .. "t" .. tostring(tid) .. "-" ..
    tostring(math.floor((counter - 1) / 100)) .. "/tool-calls"
  local body = '{"toolCallId":"' .. id .. '","toolName":"search_logs",' ..
    '"input":{"service":"api","query":"timeout","window":"24h","limit":50}}'
  return wrk.format(nil, path, nil, body)
end
