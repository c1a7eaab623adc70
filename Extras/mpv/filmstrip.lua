-- Filmstrip scrub previews for mpv: while the pointer hovers the on-screen controller's seek bar, the preview of the
-- time under it is shown above the bar.
--
-- Install: copy this file into mpv's scripts folder (~/.config/mpv/scripts/), with `filmstrip` on the PATH.
--
-- The previews come from one long-running `filmstrip previews` process per mpv (requests and answers as JSON lines):
-- the stream's own preview track (the image track its HLS master or MPD lists; a sidecar NAME.vtt beside a local
-- file), else the stream's keyframes (its I-frame playlist, or the file's keyframe index: one range request per
-- preview over HTTP).
--
-- Options (~/.config/mpv/script-opts/filmstrip.conf, or --script-opts=filmstrip-NAME=VALUE):
--   binary      the filmstrip executable (default: filmstrip, found on the PATH)
--   width       the preview's largest width in OSD pixels (default 240)
--   height      its largest height (default 135)
--   osc_scale   the controller's scalewindowed/scalefullscreen, when osc.conf changes them (default 1)
--   log         log each preview shown, at info level (default no)
--
-- The seek bar's place is the default controller's (mpv's osc.lua, layout bottombar, seekbarstyle bar): the bar
-- runs from 234 to width - 406 of the controller's 720-line canvas, in the bottom 30 lines.

local mp = require "mp"
local msg = require "mp.msg"
local utils = require "mp.utils"

local options = { binary = "filmstrip", width = 240, height = 135, osc_scale = 1, log = false }
require("mp.options").read_options(options, "filmstrip")

local OVERLAY = 47
local temporary = os.getenv("TMPDIR") or "/tmp"
local stem = string.format("%s/filmstrip-mpv-%d", temporary, utils.getpid())
local image_path = stem .. ".bgra"
local answers_path = stem .. ".answers"

local server = nil      -- the `filmstrip previews` process's standard input
local answers = nil     -- its answers file, read as it grows
local poller = nil      -- reads answers while a request is out
local source = nil      -- the path or URL of what is playing
local next_id = 0
local wanted = nil      -- the last request: { id, at, x }
local shown = false

local function start_server()
    if server then return true end
    os.remove(answers_path)
    local file = io.open(answers_path, "w")
    if not file then
        msg.error("cannot write " .. answers_path)
        return false
    end
    file:close()
    local command = string.format("exec '%s' previews --answers '%s' 2>>'%s.log'",
        options.binary:gsub("'", "'\\''"), answers_path, stem)
    server = io.popen(command, "w")
    if not server then
        msg.error("cannot start " .. options.binary)
        return false
    end
    server:setvbuf("line")
    answers = io.open(answers_path, "r")
    return true
end

local function hide()
    if shown then
        mp.command_native({ "overlay-remove", OVERLAY })
        shown = false
    end
    wanted = nil
end

--- The seek bar in OSD pixels (left, right, top, bottom), as the default controller lays it out.
local function seek_bar()
    local osd = mp.get_property_native("osd-dimensions")
    if not osd or osd.w <= 0 or osd.h <= 0 then return nil end
    local aspect = osd.w / osd.h
    local canvas_y = 720 / options.osc_scale
    local canvas_x = canvas_y * aspect
    local narrowest = 854 -- five buttons, four timecodes and two track buttons with their padding
    if canvas_x < narrowest then
        canvas_y = narrowest / aspect
        canvas_x = canvas_y * aspect
    end
    local pixels = osd.h / canvas_y
    local left, right = 234, canvas_x - 406
    if right <= left then return nil end
    -- The slider's value runs between 2 units inside each end.
    return { left = (left + 2) * pixels, right = (right - 2) * pixels, top = (canvas_y - 30) * pixels,
             bottom = canvas_y * pixels, x0 = left * pixels, x1 = right * pixels, box = (canvas_y - 54) * pixels }
end

local function show(answer)
    local osd = mp.get_property_native("osd-dimensions")
    local bar = seek_bar()
    if not osd or not bar or not wanted then return end
    local x = math.floor(wanted.x - answer.width / 2)
    x = math.max(0, math.min(osd.w - answer.width, x))
    local y = math.max(0, math.floor(bar.box - answer.height - 8))
    mp.command_native({ "overlay-add", OVERLAY, x, y, answer.output, 0, "bgra", answer.width, answer.height,
        answer.stride })
    shown = true
    if options.log then
        msg.info(string.format("preview at=%.3f start=%.3f end=%.3f x=%d y=%d w=%d h=%d engine=%s origin=%s "
            .. "bytes=%d ms=%.1f", wanted.at, answer.start, answer["end"], x, y, answer.width, answer.height,
            answer.engine, answer.origin, answer.bytes_read, answer.milliseconds))
    end
end

local function read_answers()
    if not answers then return end
    while true do
        local line = answers:read("*l")
        if not line then break end
        local answer = utils.parse_json(line)
        if answer and wanted and answer.id == wanted.id then
            poller:stop()
            if answer.error then
                msg.verbose("no preview: " .. answer.error)
            elseif not answer.superseded then
                show(answer)
            end
        end
    end
end

local function ask(at, x)
    if not source or not start_server() then return end
    if wanted and math.abs(wanted.at - at) < 0.05 then
        wanted.x = x
        return
    end
    next_id = next_id + 1
    wanted = { id = next_id, at = at, x = x }
    local request = utils.format_json({ id = next_id, source = source, at = at, width = options.width,
        height = options.height, output = image_path })
    local ok = server:write(request .. "\n")
    if not ok then
        msg.error("the filmstrip process has stopped; see " .. stem .. ".log")
        server = nil
        return
    end
    server:flush()
    poller:resume()
end

local function on_mouse(_, mouse)
    if not mouse or not mouse.hover then return hide() end
    local bar = seek_bar()
    local duration = mp.get_property_number("duration")
    if not bar or not duration or duration <= 0 or mouse.y < bar.top or mouse.y > bar.bottom
        or mouse.x < bar.x0 or mouse.x > bar.x1 then
        return hide()
    end
    local fraction = (mouse.x - bar.left) / (bar.right - bar.left)
    fraction = math.max(0, math.min(1, fraction))
    ask(fraction * duration, mouse.x)
end

mp.register_event("file-loaded", function()
    hide()
    local path = mp.get_property("path")
    if path and not path:find("^%a[%w+.-]*://") and path:sub(1, 1) ~= "/" then
        path = utils.join_path(mp.get_property("working-directory"), path)
    end
    source = path
end)

mp.observe_property("mouse-pos", "native", on_mouse)
-- Answers are read every 10 ms while a request is out.
poller = mp.add_periodic_timer(0.01, read_answers)
poller:stop()

mp.register_event("shutdown", function()
    if poller then poller:kill() end
    if server then server:close() end
    if answers then answers:close() end
    os.remove(image_path)
    os.remove(answers_path)
end)
