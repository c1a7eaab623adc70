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
--   log         log each preview shown, at info level (default no)
--
-- With mpv's own controller (osc.lua), the seek bar's place is worked out from the controller's options as it lays
-- them out (osc.conf or --script-opts=osc-...: layout bottombar, topbar, box or slimbox, seekbarstyle, the scales,
-- vidscale, valign, halign, barmargin, tcspace, timems, windowcontrols): see seek_bar() below. With the controller
-- off (`--no-osc`, or its visibility set to never) no preview is shown.
--
-- With a controller that asks a thumbnailer for previews (uosc, ModernX and others speak thumbfast's messages, addressed
-- to a script named "thumbfast"), install this file as scripts/thumbfast.lua instead: it then answers those messages
-- ("thumb" TIME X Y, "clear", and "thumbfast-info" after each file loads) and leaves the pointer to the controller.

local mp = require "mp"
local msg = require "mp.msg"
local utils = require "mp.utils"

local options = { binary = "filmstrip", width = 240, height = 135, log = false }
require("mp.options").read_options(options, "filmstrip")

-- The controller's options that place its seek bar, with osc.lua's defaults (mpv 0.35).
local osc = { layout = "bottombar", seekbarstyle = "bar", scalewindowed = 1, scalefullscreen = 1,
              scaleforcedwindow = 2, vidscale = true, valign = 0.8, halign = 0, barmargin = 0, tcspace = 100,
              timems = false, windowcontrols = "auto", windowcontrols_alignment = "right" }
-- The thumbnailer protocol's name: a controller sends "thumb" and "clear" to the script called thumbfast.
local as_thumbnailer = mp.get_script_name() == "thumbfast"
if not as_thumbnailer then require("mp.options").read_options(osc, "osc") end

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

--- The seek bar in OSD pixels, as osc.lua lays it out (player/lua/osc.lua of mpv 0.35): `x0`..`x1` and `top`..`bottom`
--- the bar, `left`..`right` the span its slider maps onto the duration, and the preview's place: its bottom edge
--- (`above`), or for the top bar its top edge (`below`).
local function seek_bar()
    local osd = mp.get_property_native("osd-dimensions")
    if not osd or osd.w <= 0 or osd.h <= 0 then return nil end
    local aspect = osd.aspect or (osd.w / osd.h)
    local scale = osc.scalewindowed
    if mp.get_property("video") == "no" then
        scale = osc.scaleforcedwindow
    elseif mp.get_property_native("fullscreen") then
        scale = osc.scalefullscreen
    end
    local canvas_y = (osc.vidscale and 720 or osd.h) / scale
    local canvas_x = canvas_y * aspect
    -- Each layout has a narrowest canvas; a narrower window is laid out on that width, scaled down.
    local timecode = (osc.timems and 170 or 110) * osc.tcspace / 100
    local narrowest = ({ box = 580, slimbox = 660 })[osc.layout] or (414 + 4 * timecode)
    if canvas_x < narrowest then
        canvas_y = narrowest / aspect
        canvas_x = narrowest
    end
    local px, py = osd.w / canvas_x, osd.h / canvas_y
    local x0, x1, top, bottom, inset, above, below
    local knob = osc.seekbarstyle ~= "bar"
    local margin = osc.barmargin
    if osc.layout == "box" then
        local cx = math.floor(canvas_x / 2 + (canvas_x / 2 - 275) * osc.halign)
        local cy = math.floor(canvas_y / 2 + (canvas_y / 2 - 69) * osc.valign)
        x0, x1, top, bottom = cx - 260, cx + 260, cy + 17, cy + 32
        inset = knob and 7.5 or 2
        above = cy - 69 - 8 -- above the box (138 units high, centred on cy), which is drawn over an overlay
    elseif osc.layout == "slimbox" then
        local cx = math.floor(canvas_x / 2 + (canvas_x / 2 - 330) * osc.halign)
        local cy = math.floor(canvas_y / 2 + (canvas_y / 2 - 35) * osc.valign)
        x0, x1, top, bottom = cx - 280, cx + 280, cy - 21, cy - 1
        inset = knob and 10 or 1.5
        above = cy - 35 - 8 -- above the box (70 units high) and the time shown over the bar
    else
        x0, x1 = 124 + timecode, canvas_x - (296 + timecode)
        local controls = osc.windowcontrols == "yes" or (osc.windowcontrols == "auto" and not mp.get_property_native("border"))
        if osc.layout == "topbar" and controls then
            if osc.windowcontrols_alignment == "left" then x0 = x0 + 80 else x1 = x1 - 80 end
        end
        inset = knob and 15 or 2
        if osc.layout == "topbar" then
            top, bottom, below = margin, margin + 30, margin + 54 + 8
        else
            top, bottom, above = canvas_y - 30 - margin, canvas_y - margin, canvas_y - 54 - 8 - margin
        end
    end
    if x1 - x0 <= 2 * inset then return nil end
    return { left = (x0 + inset) * px, right = (x1 - inset) * px, x0 = x0 * px, x1 = x1 * px, top = top * py,
             bottom = bottom * py, above = above and above * py, below = below and below * py }
end

local info_size = nil -- the size thumbfast-info last gave

--- Tells controllers what a preview is (thumbfast's "thumbfast-info"): its size, and whether there is one at all.
local function publish_info(width, height)
    local disabled = mp.get_property("vid") == "no" or not source
    info_size = { width, height }
    local info = utils.format_json({ width = width, height = height, scale_factor = 1, disabled = disabled,
        available = true, socket = "", thumbnail = stem, overlay_id = OVERLAY })
    mp.commandv("script-message", "thumbfast-info", info)
end

local function show(answer)
    local x, y
    if wanted.place then
        -- A controller's request: where it asked (the top left corner), or handed back to it to draw.
        if answer.width ~= info_size[1] or answer.height ~= info_size[2] then
            publish_info(answer.width, answer.height)
        end
        if wanted.place.script then
            local render = utils.format_json({ width = answer.width, height = answer.height, scale_factor = 1,
                x = wanted.place.x, y = wanted.place.y, socket = "", thumbnail = stem, overlay_id = OVERLAY })
            mp.commandv("script-message-to", wanted.place.script, "thumbfast-render", render)
            return
        end
        x, y = wanted.place.x, wanted.place.y
    else
        local osd = mp.get_property_native("osd-dimensions")
        local bar = seek_bar()
        if not osd or not bar then return end
        x = math.floor(wanted.x - answer.width / 2)
        x = math.max(0, math.min(osd.w - answer.width, x))
        if bar.below then
            y = math.min(osd.h - answer.height, math.floor(bar.below))
        else
            y = math.max(0, math.floor(bar.above - answer.height))
        end
    end
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

local function ask(at, x, place)
    if not source or not start_server() then return end
    if wanted and math.abs(wanted.at - at) < 0.05 then
        wanted.x, wanted.place = x, place
        return
    end
    next_id = next_id + 1
    wanted = { id = next_id, at = at, x = x, place = place }
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

--- Whether mpv's controller can be on screen: loaded (`osc=yes`) and not set to `visibility=never` (osc.lua publishes
--- its mode as `user-data/osc/visibility` in later releases, as `shared-script-properties/osc-visibility` in 0.35).
local function controller_shown()
    if mp.get_property_native("osc") == false then return false end
    local mode = mp.get_property_native("user-data/osc/visibility")
    if mode == nil then mode = (mp.get_property_native("shared-script-properties") or {})["osc-visibility"] end
    return mode ~= "never"
end

local function on_mouse(_, mouse)
    if not mouse or not mouse.hover or not controller_shown() then return hide() end
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

--- The preview's size for the video playing: its display size fitted into width x height, as the server fits it.
local function preview_size()
    local video = mp.get_property_native("video-out-params") or mp.get_property_native("video-params") or {}
    local w, h = video.dw or video.w, video.dh or video.h
    if not w or not h or w <= 0 or h <= 0 then return options.width, options.height end
    local fit = math.min(options.width / w, options.height / h)
    return math.max(1, math.floor(w * fit + 0.5)), math.max(1, math.floor(h * fit + 0.5))
end

mp.register_event("file-loaded", function()
    hide()
    local path = mp.get_property("path")
    if path and not path:find("^%a[%w+.-]*://") and path:sub(1, 1) ~= "/" then
        path = utils.join_path(mp.get_property("working-directory"), path)
    end
    source = path
    if as_thumbnailer then publish_info(preview_size()) end
end)

if as_thumbnailer then
    -- The controller tracks the pointer: "thumb" TIME X Y [SCRIPT] asks for the preview of TIME (seconds) with its
    -- top left corner at X, Y (OSD pixels), or, with X and Y empty, to be handed to SCRIPT to draw; "clear" hides it.
    mp.register_script_message("thumb", function(time, x, y, script)
        local at = tonumber(time)
        if not at then return end
        local place = { x = math.floor((tonumber(x) or 0) + 0.5), y = math.floor((tonumber(y) or 0) + 0.5) }
        if (x == nil or x == "") and (y == nil or y == "") and script and script ~= "" then place.script = script end
        ask(math.max(0, at), place.x, place)
    end)
    mp.register_script_message("clear", hide)
    mp.observe_property("video-out-params", "native", function()
        if source and info_size then
            local w, h = preview_size()
            if w ~= info_size[1] or h ~= info_size[2] then publish_info(w, h) end
        end
    end)
else
    mp.observe_property("mouse-pos", "native", on_mouse)
end
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
