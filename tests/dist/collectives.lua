-- Every collective of ml.dist, run under mpirun by tests/dist_spec.lua:
-- each rank saves what it got into the directory arg[1] as
-- <name>_<rank>.npy (or .txt for messages).
package.path = "tests/dist/?.lua;" .. package.path
local D = require "data"
local dist = ml.dist
local out = arg[1]
local r, size = dist.init()

local function save(name, x)
  ml.save_npy(("%s/%s_%d.npy"):format(out, name, r), x)
end

local function note(name, text)
  local f = assert(io.open(("%s/%s_%d.txt"):format(out, name, r), "w"))
  f:write(text)
  f:close()
end

for _, op in ipairs({"sum", "max", "min", "prod"}) do
  save("all_reduce_" .. op, dist.all_reduce(D.x(r), {op = op}))
end
save("all_reduce_int", dist.all_reduce(D.ints(r)))
local big = D.x(r):t()
dist.all_reduce(big)
save("all_reduce_view", big)
note("all_reduce_number", ("%.17g %d"):format(dist.all_reduce(r + 0.5),
                                             dist.all_reduce(r, {op = "max"})))
save("broadcast", dist.broadcast(D.x(r), {root = size - 1}))
save("all_gather", dist.all_gather(D.rows(r)))
save("reduce_scatter", dist.reduce_scatter(D.scatter_input(r, size)))
local from, to = (r - 1) % size, (r + 1) % size
if r % 2 == 0 then
  dist.send(D.x(r), to)
  save("recv", dist.recv(from))
else
  local x = ml.zeros(4, 5)
  dist.recv(x, from)
  dist.send(D.x(r), to)
  save("recv", x)
end
dist.barrier()
local ok, err = pcall(dist.all_reduce, ml.zeros(2, 2 + r % 2))
note("mismatch", ok and "no error" or tostring(err))
ok, err = pcall(function()
  if r == 0 then dist.all_reduce(ml.zeros(3)) else dist.broadcast(ml.zeros(3)) end
end)
note("mismatch_kind", ok and "no error" or tostring(err))
if r < 2 then
  ok, err = pcall(function()
    if r == 0 then dist.send(ml.zeros(3), 1) else dist.recv(ml.zeros(4), 0) end
  end)
  note("mismatch_send", ok and "no error" or tostring(err))
end
