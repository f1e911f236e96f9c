-- Help entries: several processes (the ml.dist namespace).
local OP = {name = "op", type = "string", default = '"sum"',
            doc = '"sum", "max", "min" or "prod", elementwise'}

return {
  title = "Several processes",
  namespace = "dist",
  intro = [[
One script, several processes: `mpirun -np 4 moonlab script.lua` starts
four ranks (Open MPI), each with the GPU of its rank on its machine
(MOONLAB_DEVICE=cuda:N still names one). Collectives move GPU arrays
through NCCL and CPU arrays through MPI; every rank must call the same
collectives in the same order, and before the data move the ranks
compare what they pass, so that different shapes, dtypes, devices, ops
or roots are an error on every rank, naming them, rather than a hang. A
process that no MPI launcher started is a job of one rank: MPI is not
initialised at all, rank() is 0, size() 1, the collectives give their
input's values and send/recv have no peer. Ranks are numbered from 0, as
MPI's. all_reduce, broadcast and recv into an array work in place and
return that array (torch.distributed's convention); all_gather,
reduce_scatter and recv(peer) return new arrays. Collectives on GPU
arrays are queued on the device's stream, as every operation is. When a
rank's script fails, moonlab prints the error with the rank and ends the
whole job (MPI_Abort). The sharded algorithms (ml.dist.knn, ml.dist.mm)
and the distributed option of ml.KMeans and ml.GaussianMixture build on
these; docs/dist.md gives their communication volumes.]],
  entries = {
    {
      name = "dist.init",
      usage = {"ml.dist.init()"},
      doc = [[
Readies the job: MPI is already initialised when moonlab opens under a
launcher; init also joins the NCCL communicator of the default device
when it is a GPU (which the first collective on a GPU array does
otherwise; a script whose first GPU operation of ml.dist is a send or
recv must call init first, on every rank). Calling it again does
nothing.]],
      returns = "rank and size, two integers.",
      example = [[
local rank, size = ml.dist.init()
print(rank, size)  --> 0 1]],
    },
    {
      name = "dist.rank",
      usage = {"ml.dist.rank()"},
      doc = "This process's rank, 0 to size() - 1.",
      returns = "an integer.",
      example = [[
print(ml.dist.rank())  --> 0]],
    },
    {
      name = "dist.size",
      usage = {"ml.dist.size()"},
      doc = "The number of ranks of the job (1 without a launcher).",
      returns = "an integer.",
      example = [[
print(ml.dist.size())  --> 1]],
    },
    {
      name = "dist.local_rank",
      usage = {"ml.dist.local_rank()"},
      doc = [[
This process's rank among the ranks on its machine (MPI's shared-memory
split), which picks its GPU.]],
      returns = "an integer.",
      example = [[
print(ml.dist.local_rank())  --> 0]],
    },
    {
      name = "dist.barrier",
      usage = {"ml.dist.barrier()"},
      doc = [[
Returns when every rank has called it (MPI_Barrier; work queued on a GPU
is not waited for: ml.synchronize() does that).]],
      returns = "nothing.",
      example = [[
ml.dist.barrier()]],
    },
    {
      name = "dist.all_reduce",
      usage = {"ml.dist.all_reduce(x [, opts])"},
      doc = [[
Every rank's x becomes the elementwise op of all ranks' x, in place (a
non-contiguous view through a copy). x must have one shape, dtype and
device kind on every rank. A Lua number stands for a 0-d array (int64
for an integer, else float64) and the result comes back as a number.]],
      options = {OP},
      returns = "x, or the reduced number.",
      example = [[
local x = ml.array({1.5, 2, 3})
ml.dist.all_reduce(x, {op = "max"})
print(x[3], ml.dist.all_reduce(2.5))  --> 3.0 2.5]],
    },
    {
      name = "dist.broadcast",
      usage = {"ml.dist.broadcast(x [, opts])"},
      doc = [[
Every rank's x becomes rank root's x, in place; x must have one shape
and dtype on every rank. A Lua number comes back as root's number.]],
      options = {
        {name = "root", type = "integer", default = "0",
         doc = "the rank whose x every rank gets"},
      },
      returns = "x, or root's number.",
      example = [[
local seed = ml.dist.broadcast(42)
print(seed)  --> 42]],
    },
    {
      name = "dist.all_gather",
      usage = {"ml.dist.all_gather(x)"},
      doc = [[
The ranks' x one after the other along the first dimension, in rank
order, on every rank. Their first dimensions may differ (shards of
unequal length); the other dimensions, the dtype and the device kind
must agree. A 0-d x counts as one element.]],
      returns = "a new array on x's device.",
      example = [[
local g = ml.dist.all_gather(ml.ones(2, 3))
print(g:size(1), g:size(2))  --> 2 3]],
    },
    {
      name = "dist.reduce_scatter",
      usage = {"ml.dist.reduce_scatter(x [, opts])"},
      doc = [[
Splits x's first dimension into size() equal blocks (an error when it
does not divide) and gives rank r the elementwise op over the ranks of
their block r.]],
      options = {OP},
      returns = "a new array: x's shape with the first dimension divided "
                .. "by size().",
      example = [[
local b = ml.dist.reduce_scatter(ml.ones(4, 2))
print(b:size(1), b[{1, 1}])  --> 4 1.0]],
    },
    {
      name = "dist.send",
      usage = {"ml.dist.send(x, peer)"},
      doc = [[
Sends x to rank peer, which must call recv with a matching array (or
recv(peer)); the two ranks compare shape and dtype first and both raise
when they differ. Pairs of ranks match their sends and receives in
order. Sending to oneself, or in a job of one rank, is an error.]],
      returns = "nothing.",
      example = [[
if ml.dist.size() > 1 and ml.dist.rank() == 0 then
  ml.dist.send(ml.arange(5), 1)
end]],
    },
    {
      name = "dist.recv",
      usage = {"ml.dist.recv(x, peer)", "ml.dist.recv(peer [, opts])"},
      doc = [[
Receives what rank peer sends: into x, in place (its shape and dtype
must be the sender's), or into a new array of the sender's shape and
dtype.]],
      options = {
        {name = "device", type = "string", default = "ml.device()",
         doc = "the new array's device"},
      },
      returns = "x, or the new array.",
      example = [[
if ml.dist.size() > 1 and ml.dist.rank() == 1 then
  print(ml.dist.recv(0):numel())
end]],
    },
    {
      name = "dist.part",
      usage = {"ml.dist.part(n, parts, q)"},
      doc = [[
The block of part q (0-based, as ranks) when n rows are split into
parts as even as can be, the longer parts first: the layout that
ml.dist.knn's shards may follow and ml.dist.mm's blocks must.]],
      returns = "the first row (1-based) and the number of rows.",
      example = [[
print(ml.dist.part(10, 3, 1))  --> 5 3]],
    },
    {
      name = "dist.knn",
      usage = {"ml.dist.knn(queries, refs, k [, opts])"},
      doc = [[
Exact k nearest neighbours over references sharded across the ranks:
each rank passes the same queries and its shard of the references (the
shards, in rank order, are the reference rows one after the other); each
rank searches its shard with ml.knn, the candidates are all-gathered
and merged. The answer, on every rank, is the one-process ml.knn's on
all the references: global 1-based indices, ties to the lower index. k
may exceed a shard's rows but not all the references.]],
      options = {
        {name = "metric", type = "string", default = '"euclidean"',
         doc = "as ml.knn's"},
        {name = "budget", type = "integer", default = "2^30",
         doc = "as ml.knn's, per rank"},
        {name = "tf32", type = "boolean", default = "true",
         doc = "as ml.knn's"},
        {name = "method", type = "string", default = '"auto"',
         doc = "as ml.knn's"},
      },
      returns = "dist and index, m x k, on every rank.",
      example = [[
local refs = ml.array({{0, 0}, {1, 0}, {0, 2}})
local d, i = ml.dist.knn({{0.1, 0}}, refs, 2)
print(i[{1, 1}], i[{1, 2}])  --> 1 2]],
    },
    {
      name = "dist.mm",
      usage = {"ml.dist.mm(A, B, opts)"},
      doc = [[
The product of block-distributed matrices by SUMMA. The ranks form c
layers of a pr x pc grid (rank = layer pr pc + i pc + j); rank (i, j)
of every layer holds block (i, j) of A (m x k) and of B (k x n), where
A's rows split into pr and its columns into pc blocks, B's rows into pr
and its columns into pc, each as ml.dist.part splits. For each panel of
k (the common refinement of the two splits) its owners send it along
the grid row (A) and the grid column (B), and each rank adds the panels'
product. With replication c > 1 (2.5D) each layer takes every c-th
panel and the layers' partial sums are added on layer 0, which sends
the result back. verbose prints each rank's received words and their
ratio to the lower bound (mnk)^(2/3) / sqrt(c p) (docs/dist.md).]],
      options = {
        {name = "m", type = "integer", default = "required",
         doc = "rows of A"},
        {name = "k", type = "integer", default = "required",
         doc = "columns of A, rows of B"},
        {name = "n", type = "integer", default = "required",
         doc = "columns of B"},
        {name = "grid", type = "table", default = "the squarest",
         doc = "{pr, pc}, with pr pc c = size()"},
        {name = "replication", type = "integer", default = "1",
         doc = "c, the layers of 2.5D"},
        {name = "verbose", type = "boolean", default = "false",
         doc = "print the words each rank receives and the bound"},
      },
      returns = "a new array: block (i, j) of C = A B on every layer.",
      example = [[
local A, B = ml.ones(2, 3), ml.ones(3, 4)
local C = ml.dist.mm(A, B, {m = 2, k = 3, n = 4})
print(C[{1, 1}], C:size(2))  --> 3.0 4]],
    },
  },
}
