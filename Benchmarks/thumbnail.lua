-- wrk script: GET /api/thumbnail at a time that changes with every request, scattered over the 2-minute sample in
-- steps of FILMSTRIP_STEP seconds (0.1 by default; 0.0001 makes nearly every time new), each wrk thread on its own
-- sequence; then one line of figures.
local src = os.getenv("FILMSTRIP_SRC") or "sample.mp4"
local step = tonumber(os.getenv("FILMSTRIP_STEP") or "0.1")
local slots = math.floor(120 / step)
local threads = 0
local n = 0

setup = function(thread)
    thread:set("id", threads)
    threads = threads + 1
end

request = function()
    n = n + 1
    local k = ((n * 2 + (id or 0)) * 7919) % slots
    return wrk.format("GET", string.format("/api/thumbnail?src=%s&t=%.4f", src, k * step))
end

dofile("Benchmarks/wrk-report.lua")
