-- The reference registry benchmark's request mix for wrk (bench/registry_bench.sh):
-- 75 % read-heavy users (40 % list models, 30 % get routes, 20 % health, 10 % model
-- detail) and 25 % write-mixed users (40 % list, 30 % register, 20 % routes, 10 % health),
-- drawn per request from the combined weights (wrk's connections are the users, closed
-- loop, no think time, so a per-request draw gives the same mix). Environment:
-- HANGAR_TOKEN (a write token), MODELS (how many models were seeded, for the detail
-- requests). done() prints one JSON line with the figures.
local token = os.getenv("HANGAR_TOKEN")
local models = tonumber(os.getenv("MODELS") or "100")
local counter = 0
local thread_id = 0
local threads = {}

-- The combined weights: list 0.75*40+0.25*40, routes 0.75*30+0.25*20, health
-- 0.75*20+0.25*10, detail 0.75*10, register 0.25*30 (percent).
local mix = {
  {"list", 40.0}, {"routes", 27.5}, {"health", 17.5}, {"detail", 7.5}, {"register", 7.5},
}

function setup(thread)
  thread:set("tid", thread_id)
  thread_id = thread_id + 1
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time() + (tid or 0) * 7919)
end

local function pick()
  local r = math.random() * 100
  for _, m in ipairs(mix) do
    r = r - m[2]
    if r < 0 then return m[1] end
  end
  return "list"
end

function request()
  local kind = pick()
  if kind == "list" then
    return wrk.format("GET", "/api/v1/models?limit=20")
  elseif kind == "routes" then
    return wrk.format("GET", "/api/v1/gateway/routes")
  elseif kind == "health" then
    return wrk.format("GET", "/health")
  elseif kind == "detail" then
    return wrk.format("GET", "/api/v1/models/seed-" .. math.random(0, models - 1))
  end
  counter = counter + 1
  local body = string.format('{"name":"bench-%d-%d-%d","repo":"alice/bert","revision":"main"}',
                              tid or 0, os.time(), counter)
  return wrk.format("POST", "/api/v1/models",
                    {["Authorization"] = "Bearer " .. token,
                     ["Content-Type"] = "application/json"}, body)
end

function done(summary, latency, requests)
  local errors = summary.errors.status + summary.errors.connect + summary.errors.read +
                 summary.errors.write + summary.errors.timeout
  io.write(string.format(
    '{"requests":%d,"rps":%.1f,"p50_ms":%.3f,"p95_ms":%.3f,"p99_ms":%.3f,"max_ms":%.3f,' ..
    '"errors":%d,"non2xx":%d}\n',
    summary.requests, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, errors, summary.errors.status))
end
