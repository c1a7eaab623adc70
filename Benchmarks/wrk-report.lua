-- The last line of every wrk run of Benchmarks/serve.sh: requests, errors, rate and latency percentiles.
done = function(summary, latency, requests)
    local e = summary.errors
    local errors = e.connect + e.read + e.write + e.timeout + e.status
    io.write(string.format(
        "requests %d  errors %d (status %d, timeout %d)  %.0f req/s  p50 %.2f ms  p99 %.2f ms  max %.2f ms\n",
        summary.requests, errors, e.status, e.timeout, summary.requests / (summary.duration / 1e6),
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
