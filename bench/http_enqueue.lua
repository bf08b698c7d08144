-- wrk script for `bench/run.sh enqueue`: POSTs the JSON body in the file given after `--` to the
-- path given after it, over and over on each keep-alive connection. The Authorization header
-- comes from wrk's -H option.
function init(args)
  local file = assert(io.open(args[1], "rb"))
  wrk.body = file:read("*a")
  file:close()
  wrk.method = "POST"
  wrk.path = args[2]
  wrk.headers["Content-Type"] = "application/json"
end

