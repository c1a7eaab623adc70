-- wrk script for Benchmarks/image_urls.py: GET /ID/thumbnail.jpg?time=T&width=320 over the videos in
-- FILMSTRIP_VIDEOS (comma-separated ids). With FILMSTRIP_WARM=N, the N URLs of a fixed list, in turn (answers a
-- cache holds); else a random video at a random time (to the millisecond: nearly every URL new). The last line is
-- the run's figures as JSON.
local videos = {}
for id in string.gmatch(os.getenv("FILMSTRIP_VIDEOS") or "", "[^,]+") do videos[#videos + 1] = id end
local duration = tonumber(os.getenv("FILMSTRIP_DURATION") or "30")
local warm = tonumber(os.getenv("FILMSTRIP_WARM") or "0")
local width = os.getenv("FILMSTRIP_WIDTH") or "320"
local threads = 0
local n = 0

setup = function(thread)
    thread:set("id", threads)
    threads = threads + 1
end

init = function()
    math.randomseed(os.time() * 1000 + (id or 0))
end

local function target(video, t)
    return string.format("/%s/thumbnail.jpg?time=%.3f&width=%s", video, t, width)
end

request = function()
    n = n + 1
    if warm > 0 then
        local k = ((n * 2 + (id or 0)) % warm)
        return wrk.format("GET", target(videos[k % #videos + 1], (k * 7.919) % (duration - 0.5)))
    end
    return wrk.format("GET", target(videos[math.random(#videos)], math.random() * (duration - 0.5)))
end

done = function(summary, latency, requests)
    local e = summary.errors
    io.write(string.format(
        '{"requests": %d, "errors": %d, "status_errors": %d, "rate": %.2f, "p50": %.3f, "p95": %.3f, "p99": %.3f}\n',
        summary.requests, e.connect + e.read + e.write + e.timeout + e.status, e.status,
        summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(95) / 1000,
        latency:percentile(99) / 1000))
end
