-- wrk script: every endpoint of `filmstrip serve` in one run, in a fixed rotation of 20 requests: 11 thumbnails at
-- changing times, 2 track JSON, 2 sheet images, 1 status, 1 library page, 1 watch page, 2 byte ranges of the video.
-- Then one line of figures, with the requests answered with a status other than the one expected.
local src = os.getenv("FILMSTRIP_SRC") or "sample.mp4"
local threads = 0
local n = 0
local rotation = {
    "thumb", "track", "thumb", "image", "thumb", "status", "thumb", "media", "thumb", "page",
    "thumb", "track", "thumb", "image", "thumb", "watch", "thumb", "media", "thumb", "thumb",
}

setup = function(thread)
    thread:set("id", threads)
    threads = threads + 1
end

request = function()
    n = n + 1
    local kind = rotation[(n + (id or 0)) % #rotation + 1]
    if kind == "thumb" then
        local k = ((n * 2 + (id or 0)) * 7919) % 1200
        return wrk.format("GET", string.format("/api/thumbnail?src=%s&t=%.1f", src, k * 0.1))
    elseif kind == "track" then
        return wrk.format("GET", "/api/track?src=" .. src)
    elseif kind == "image" then
        return wrk.format("GET", string.format("/api/image?src=%s&i=%d", src, n % 3))
    elseif kind == "status" then
        return wrk.format("GET", "/api/status")
    elseif kind == "page" then
        return wrk.format("GET", "/")
    elseif kind == "watch" then
        return wrk.format("GET", "/watch/" .. src)
    else
        local first = (n * 65536) % 290000
        return wrk.format("GET", "/media/" .. src, { Range = string.format("bytes=%d-%d", first, first + 65535) })
    end
end

dofile("Benchmarks/wrk-report.lua")
