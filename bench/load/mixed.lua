-- mixed.lua — bench/load.sh's request mix for wrk: 80% ingest (every
-- format, plain and gzip'ed, single reports and batches: the kinds and
-- shares of bench/load/payloads.py), 15% sampling check-ins, 5% dashboard
-- reads (groups list, a group, stats).
--
-- Environment: LOAD_PAYLOADS (payloads.py's Lua table), LOAD_GROUPS (group
-- keys, one a line; may be empty), LOAD_RUN (a number fresh per run: report
-- ids and MetricKit pids never repeat across runs), APP, INGEST_KEY,
-- ADMIN_TOKEN, LOAD_USERS (distinct users, 20000).
--
-- Each request gets fresh report ids: a resend would take the cheap
-- idempotent path and measure nothing. wrk's latency is over all requests;
-- per route, bench/load/report.py reads nginx's access log.

local bit = require("bit")

local kinds = dofile(os.getenv("LOAD_PAYLOADS"))
local app = os.getenv("APP")
local ingest_key = os.getenv("INGEST_KEY")
local admin = "Bearer " .. os.getenv("ADMIN_TOKEN")
local run = tonumber(os.getenv("LOAD_RUN"))
local users = tonumber(os.getenv("LOAD_USERS") or "20000")

local counter = 0
local next_id = 0

function setup(thread)
	thread:set("tid", counter)
	counter = counter + 1
end

-- CRC-32 (gzip's) by table, one byte at a time.
local crc_table = {}
for i = 0, 255 do
	local c = i
	for _ = 1, 8 do
		if bit.band(c, 1) == 1 then
			c = bit.bxor(bit.rshift(c, 1), 0xEDB88320)
		else
			c = bit.rshift(c, 1)
		end
	end
	crc_table[i] = c
end

local function crc32(crc, s)
	crc = bit.bnot(crc)
	for i = 1, #s do
		crc = bit.bxor(bit.rshift(crc, 8), crc_table[bit.band(bit.bxor(crc, s:byte(i)), 0xff)])
	end
	return bit.bnot(crc)
end

local function le32(n)
	return string.char(bit.band(n, 0xff), bit.band(bit.rshift(n, 8), 0xff),
		bit.band(bit.rshift(n, 16), 0xff), bit.band(bit.rshift(n, 24), 0xff))
end

-- A non-final stored deflate block holding S (shorter than 65536 bytes).
local function stored(s)
	local n = #s
	local nn = bit.band(bit.bnot(n), 0xffff)
	return string.char(0, bit.band(n, 0xff), bit.rshift(n, 8), bit.band(nn, 0xff), bit.rshift(nn, 8)) .. s
end

local GZIP_HEADER = string.char(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255)
local LAST_BLOCK = string.char(1, 0, 0, 0xff, 0xff)

local function user()
	return "u-" .. math.random(0, users - 1)
end

local function slot_value(slot)
	next_id = next_id + 1
	if slot == "RID" then
		return string.format("load-%d-%d-%d", run, tid, next_id)
	elseif slot == "USER" then
		return user()
	end
	return string.format("%.0f", run * 1e12 + tid * 1e9 + next_id)
end

local function body(kind, v)
	local plain, packed = {}, {}
	for i = 1, #v.text do
		plain[#plain + 1] = v.text[i]
		if kind.gzip then
			packed[#packed + 1] = v.z[i]
		end
		if v.slot[i] ~= "" then
			local value = slot_value(v.slot[i])
			plain[#plain + 1] = value
			if kind.gzip then
				packed[#packed + 1] = stored(value)
			end
		end
	end
	local text = table.concat(plain)
	if not kind.gzip then
		return text
	end
	return GZIP_HEADER .. table.concat(packed) .. LAST_BLOCK .. le32(crc32(0, text)) .. le32(#text)
end

local ingest_weight = 0
for _, k in ipairs(kinds) do
	ingest_weight = ingest_weight + k.weight
end

local group_keys = {}

function init(args)
	math.randomseed(run * 1000 + tid)
	local f = io.open(os.getenv("LOAD_GROUPS"), "r")
	if f then
		for line in f:lines() do
			if #line > 0 then
				group_keys[#group_keys + 1] = line
			end
		end
		f:close()
	end
end

local function ingest(r)
	for _, k in ipairs(kinds) do
		if r <= k.weight then
			local headers = {["X-Stallscope-Key"] = ingest_key, ["Content-Type"] = "application/json"}
			if k.gzip then
				headers["Content-Encoding"] = "gzip"
			end
			if k.user_header then
				headers["X-Stallscope-User"] = user()
			end
			local v = k.variants[math.random(#k.variants)]
			return wrk.format("POST", k.path, headers, body(k, v))
		end
		r = r - k.weight
	end
end

local function sampling()
	return wrk.format("GET", "/api/v1/sampling?user_id=" .. user() ..
		"&app_version=8.0.1&os_version=17.2&device=iPhone14,2",
		{["X-Stallscope-Key"] = ingest_key})
end

local function dashboard(r)
	local base = "/api/v1/apps/" .. app
	local headers = {["Authorization"] = admin}
	if r <= 2 then
		return wrk.format("GET", base .. "/groups?limit=50", headers)
	elseif r <= 4 and #group_keys > 0 then
		return wrk.format("GET", base .. "/groups/" .. group_keys[math.random(#group_keys)], headers)
	end
	return wrk.format("GET", base .. "/stats", headers)
end

function request()
	local r = math.random(100)
	if r <= ingest_weight then
		return ingest(r)
	elseif r <= ingest_weight + 15 then
		return sampling()
	end
	return dashboard(r - ingest_weight - 15)
end

-- One JSON line for bench/load/report.py: what wrk saw, all routes.
function done(summary, latency, requests)
	local e = summary.errors
	io.write(string.format('WRK {"requests":%d,"duration_us":%d,"bytes":%d,' ..
		'"connect":%d,"read":%d,"write":%d,"timeout":%d,"status":%d,' ..
		'"p50_ms":%.3f,"p99_ms":%.3f,"max_ms":%.3f}\n',
		summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write,
		e.timeout, e.status, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
		latency.max / 1000))
end
