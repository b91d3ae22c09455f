-- wrk script of the gateway benchmark (bench/gateway_bench.sh): one small non-streamed chat
-- completion per request, to the gateway or straight to the backend (the same bytes; the
-- backend ignores the Authorization header). With RATE set (requests/s over all
-- connections), each connection waits connections/RATE between its requests, so the
-- offered load is about RATE (wrk has no open loop: this is a closed loop with think time).
local token = os.getenv("HANGAR_TOKEN") or ""
local rate = tonumber(os.getenv("RATE") or "0")
local connections = tonumber(os.getenv("CONNECTIONS") or "1")
local body = '{"model":"bench","messages":[{"role":"user","content":"hello"}]}'

function request()
  return wrk.format("POST", "/v1/chat/completions",
    {["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json"}, body)
end

function delay()
  if rate <= 0 then return 0 end
  return connections * 1000 / rate
end

function done(summary, latency, requests)
  local errors = summary.errors.status + summary.errors.connect + summary.errors.read +
                 summary.errors.write + summary.errors.timeout
  io.write(string.format(
    '{"requests":%d,"rps":%.1f,"p50_ms":%.3f,"p99_ms":%.3f,"max_ms":%.3f,"errors":%d}\n',
    summary.requests, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000, errors))
end
