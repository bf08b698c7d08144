-- wrk script for `bench/run.sh http`: GET /api/jobs/<uid>, cycling through the uids listed one
-- per line in the file given after `--`. Each wrk thread starts at its own place in the list.
-- The Authorization header comes from wrk's -H option.
local threads = 0

function setup(thread)
  thread:set("thread_index", threads)
  threads = threads + 1
end

local uids = {}
local i = 0

function init(args)
  for line in io.lines(args[1]) do
    if line ~= "" then uids[#uids + 1] = line end
  end
  if #uids == 0 then error("no uids in " .. args[1]) end
  i = (thread_index * 7919) % #uids
end

function request()
  i = i % #uids + 1
  return wrk.format("GET", "/api/jobs/" .. uids[i])
end
