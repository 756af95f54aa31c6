-- wrk script of test_cache_bounds.py: every request a distinct valid spelling of a query, of
-- kinds that an attacker of the front cache would use (issue: cache-busters, leading zeros,
-- page_size above 100, case variants, pages past the end, random addresses and hashes).
-- One request in eleven is ordinary traffic instead: canonical pages with records.
-- Arguments: LIMIT (answers per thread), ADDRESS (a destination address with records, lower
-- case), HASH (a record's hash, lower case, no 0x), DIR, RECORDS (the fixture's records). A thread that has received LIMIT answers
-- stops and creates DIR/done-<thread> (wrk itself runs until -d or SIGINT: the test sends
-- SIGINT once every thread is done); done() prints one line of counts per status class.

local limit, address, hash, dir, records
local sent, received, finished = 0, 0, false
local threads = {}

function setup(thread)
  thread:set("thread_id", #threads)
  table.insert(threads, thread)
end

function init(args)
  limit = tonumber(args[1])
  address = args[2]
  hash = args[3]
  dir = args[4]
  records = tonumber(args[5])
  counts = {["2"] = 0, ["3"] = 0, ["4"] = 0, ["5"] = 0}  -- a global: done() reads it
end

-- text with letters upper-cased where the bits of mask say so (mask > 0: never all lower).
local function case_variant(text, mask)
  local out = {}
  local bit = 0
  for c in text:gmatch(".") do
    if c:match("%a") then
      if math.floor(mask / 2 ^ (bit % 40)) % 2 == 1 then c = c:upper() end
      bit = bit + 1
    end
    out[#out + 1] = c
  end
  return table.concat(out)
end

local function random_hex(n, seed)
  local out = {}
  local x = seed
  for i = 1, n do
    x = (x * 1103515245 + 12345) % 2147483648
    out[i] = string.format("%x", math.floor(x / 65536) % 16)
  end
  return table.concat(out)
end

local statuses = {"deposit", "pending", "confirmed", "error"}

function request()
  sent = sent + 1
  local i = thread_id * 10000000 + sent  -- distinct over threads
  local kind = i % 11
  local path
  if kind == 0 then
    path = "/v1/networks?_=" .. i
  elseif kind == 1 then
    path = "/v1/history?page_id=0" .. i  -- a leading zero
  elseif kind == 2 then
    path = "/v1/history?page_id=" .. (1000 + i)  -- canonical, past the end
  elseif kind == 3 then
    path = "/v1/history?page_size=" .. (101 + i % 400) .. "&page_id=" .. (1000 + i)
  elseif kind == 4 then
    path = "/v1/history?status=" .. case_variant(statuses[i % 4 + 1], i) .. "&order=asc&page_id=0" .. i
  elseif kind == 5 then
    path = "/v1/history?destination_address=0x" .. random_hex(40, i)  -- canonical, no records
  elseif kind == 6 then
    path = "/v1/history?page_size=1&destination_address=0x" .. case_variant(address:sub(3), i)
  elseif kind == 7 then
    path = "/v1/history/hash?hash=" .. case_variant(hash, i)
  elseif kind == 8 then
    path = "/v1/history/hash?hash=" .. random_hex(64, i)  -- canonical, no such record
  elseif kind == 9 then
    path = "/v1/pairs?cb=" .. i
  else
    -- ordinary traffic: canonical pages with records, every page_size and page of the
    -- fixture's RECORDS records in both orders (storable: these fill the cache and its keys)
    local size = (math.floor(i / 11) % 100) + 1
    local pages = math.ceil(records / size)
    local order = (math.floor(i / 1100) % 2 == 0) and "ASC" or "DESC"
    path = "/v1/history?page_size=" .. size .. "&page_id=" .. (math.floor(i / 2200) % pages) ..
           "&order=" .. order
  end
  return wrk.format("GET", path)
end

function response(status, headers, body)
  local class = tostring(math.floor(status / 100))
  counts[class] = (counts[class] or 0) + 1
  received = received + 1
  if received >= limit and not finished then
    finished = true
    io.open(dir .. "/done-" .. thread_id, "w"):close()
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  local total = {["2"] = 0, ["3"] = 0, ["4"] = 0, ["5"] = 0}
  for _, thread in ipairs(threads) do
    for class, n in pairs(thread:get("counts")) do total[class] = (total[class] or 0) + n end
  end
  io.write(string.format("flood: 2xx=%d 3xx=%d 4xx=%d 5xx=%d errors=%d\n", total["2"], total["3"],
    total["4"], total["5"], summary.errors.connect + summary.errors.read + summary.errors.write +
    summary.errors.timeout + summary.errors.status))
end
