-- ml.linalg and ml.cov on the CUDA backend against the CPU backend (the
-- helpers are in tests/helpers/cuda.lua), on random inputs of awkward
-- sizes that reach every path of kernels/linalg.cu: single matrices
-- (cuSOLVER's 64-bit API) and stacks (getrfBatched, getrsBatched,
-- trsmBatched, syevBatched), one matrix for many right-hand sides (folded
-- into one wide solve), loops (syrk, geqrf, orgqr, gesvd); and of the
-- blocked kernels of triangular_blocked.cu (stacks of Cholesky factors,
-- triangular inverses): orders about their 32-column steps, 128-row
-- solves and 64 x 64 update tiles, batches past a grid's 65535.
-- Results that are unique (factors with a positive diagonal, solutions,
-- values) are compared elementwise; eigenvectors, singular vectors and
-- Q, whose signs are the library's choice, through identities on the GPU
-- and the invariants |R|. Pending where there is no GPU.
local ml = require "moonlab"

if not ml.cuda.available() then
  describe("cuda linalg", function()
    pending("no CUDA device here (ml.cuda.available() is false): these specs run on a GPU host")
  end)
  return
end

local H = require "tests.helpers.cuda"
local GPU, same, same_error, floats, input = H.GPU, H.same, H.same_error, H.floats, H.input

-- Tolerances relative to the size of the results (the largest element),
-- times the order of the matrices: the libraries differ in blocking and
-- order of summation, not in accuracy.
local EPS = {float32 = 5e-6, float64 = 2e-14}

local function scale(x) return math.max(1, x:abs():max()) end

-- g (GPU) against c (CPU), within EPS * order * size.
local function agree(g, c, what, order)
  same(g, c, what, 0, EPS[c.dtype] * (order + 8) * scale(c))
end

-- An identity on the GPU: lhs against rhs (both GPU arrays).
local function holds(lhs, rhs, what, order)
  same(lhs, rhs:cpu(), what, 0, EPS[rhs.dtype] * 10 * (order + 8) * scale(rhs))
end

local function shape_of(batch, m, n)
  local s = {table.unpack(batch)}
  s[#s + 1], s[#s + 2] = m, n
  return s
end

local function tr(x) return x:transpose(-1, -2) end

-- A symmetric positive-definite stack (CPU), well conditioned.
local function spd(batch, n, dt)
  local x = input(shape_of(batch, n, n), dt, -1, 1)
  return ml.matmul(x, tr(x)) + ml.eye(n, {dtype = dt, device = "cpu"}) * n
end

local BATCHES = {{}, {1}, {5}, {2, 3}}
local SIZES = {1, 3, 17, 64, 129}

describe("cuda linalg", function()
  it("cholesky: the same factors, single and batched, lower and upper", function()
    for _, dt in ipairs(floats) do
      for _, batch in ipairs(BATCHES) do
        for _, n in ipairs(SIZES) do
          local a = spd(batch, n, dt)
          local what = ("cholesky %s %s"):format(dt, table.concat(a.shape, "x"))
          agree(ml.linalg.cholesky(a:cuda()), ml.linalg.cholesky(a), what, n)
          agree(ml.linalg.cholesky(a:cuda(), {upper = true}),
                ml.linalg.cholesky(a, {upper = true}), what .. " upper", n)
        end
      end
    end
  end)

  it("cholesky and inv_triangular: the blocked kernels about their block edges", function()
    for _, dt in ipairs(floats) do
      for _, n in ipairs({2, 31, 32, 33, 63, 65, 97, 160, 161, 200}) do
        local a = spd({3}, n, dt)
        local what = ("%s n=%d"):format(dt, n)
        local l = ml.linalg.cholesky(a)
        agree(ml.linalg.cholesky(a:cuda()), l, "cholesky " .. what, n)
        agree(ml.linalg.cholesky(a:cuda(), {upper = true}),
              ml.linalg.cholesky(a, {upper = true}), "cholesky upper " .. what, n)
        local x = ml.linalg.inv_triangular(l, {lower = true})
        agree(ml.linalg.inv_triangular(l:cuda(), {lower = true}), x, "inv_triangular " .. what,
              n)
        agree(ml.linalg.inv_triangular(tr(l):cuda()), tr(x), "inv_triangular upper " .. what,
              n)
        agree(ml.linalg.inv_triangular(l[2]:cuda(), {lower = true}), x[2],
              "inv_triangular single " .. what, n)
        local unit = l / l:diagonal({dim1 = -2, dim2 = -1}):unsqueeze(-1)
        agree(ml.linalg.inv_triangular(unit:cuda(), {lower = true, unit_diagonal = true}),
              ml.linalg.inv_triangular(unit, {lower = true, unit_diagonal = true}),
              "inv_triangular unit " .. what, n)
      end
      local many = spd({70000}, 3, dt)
      local l = ml.linalg.cholesky(many)
      agree(ml.linalg.cholesky(many:cuda()), l, "cholesky of 70000 " .. dt, 3)
      agree(ml.linalg.inv_triangular(l:cuda(), {lower = true}),
            ml.linalg.inv_triangular(l, {lower = true}), "inv_triangular of 70000 " .. dt, 3)
    end
  end)

  it("cholesky and inv_triangular: the blocked kernels' errors", function()
    for _, dt in ipairs(floats) do
      local a = spd({4}, 70, dt)
      local bad = a:clone()
      bad[{3, 67, 67}] = -1000
      same_error(function() return ml.linalg.cholesky(bad:cuda()) end,
                 function() return ml.linalg.cholesky(bad) end, "blocked not positive definite")
      local nan = a:clone()
      nan[{2, 50, 40}] = 0 / 0
      same_error(function() return ml.linalg.cholesky(nan:cuda()) end,
                 function() return ml.linalg.cholesky(nan) end, "blocked NaN")
      local g = ml.linalg.cholesky(bad:cuda(), {check = false})
      assert.is_true(g[3]:isnan():all())
      agree(g[{{1, 2}}], ml.linalg.cholesky(a[{{1, 2}}]), "unchecked " .. dt, 70)
      local l = ml.linalg.cholesky(a)
      l[{2, 45, 45}] = 0
      same_error(function() return ml.linalg.inv_triangular(l:cuda(), {lower = true}) end,
                 function() return ml.linalg.inv_triangular(l, {lower = true}) end,
                 "inv_triangular zero diagonal")
      local x = ml.linalg.inv_triangular(l:cuda(), {lower = true, check = false})
      assert.is_true(x[2]:isnan():all())
      agree(x[1], ml.linalg.inv_triangular(l[1], {lower = true}), "unchecked inverse " .. dt, 70)
    end
  end)

  it("cholesky: the same errors, NaN included", function()
    for _, dt in ipairs(floats) do
      for _, batch in ipairs({{}, {4}}) do
        local a = spd(batch, 9, dt)
        local bad = a:clone()
        if #batch == 0 then bad[{6, 6}] = -100 else bad[{3, 6, 6}] = -100 end
        same_error(function() return ml.linalg.cholesky(bad:cuda()) end,
                   function() return ml.linalg.cholesky(bad) end, "not positive definite")
        local nan = a:clone()
        if #batch == 0 then nan[{7, 4}] = 0 / 0 else nan[{2, 7, 4}] = 0 / 0 end
        same_error(function() return ml.linalg.cholesky(nan:cuda()) end,
                   function() return ml.linalg.cholesky(nan) end, "NaN")
      end
    end
  end)

  it("solve_triangular and cholesky_solve: every side, triangle and broadcast", function()
    for _, dt in ipairs(floats) do
      for _, n in ipairs({1, 5, 33, 130}) do
        local l = ml.linalg.cholesky(spd({3}, n, dt))
        local b = input({3, n, 7}, dt)
        local bt = input({3, 7, n}, dt)
        local cases = {
          {l, b, {lower = true}}, {l, b, {lower = true, trans = true}},
          {tr(l), b, {}}, {l, b, {lower = true, unit_diagonal = true}},
          {l, bt, {lower = true, left = false}},
          {tr(l), bt, {left = false, trans = true}},
          {l[1], b, {lower = true}}, {l[1], bt, {lower = true, left = false}},
          {l, b[1], {lower = true}}, {l[2], b[2][{{}, 1}], {lower = true}},
        }
        for i, c in ipairs(cases) do
          local what = ("solve_triangular %s n=%d case %d"):format(dt, n, i)
          agree(ml.linalg.solve_triangular(c[1]:cuda(), c[2]:cuda(), c[3]),
                ml.linalg.solve_triangular(c[1], c[2], c[3]), what, n * n)
        end
        agree(ml.linalg.cholesky_solve(b:cuda(), l:cuda()), ml.linalg.cholesky_solve(b, l),
              "cholesky_solve " .. dt, n * n)
        agree(ml.linalg.cholesky_solve(b:cuda(), tr(l):cuda(), {upper = true}),
              ml.linalg.cholesky_solve(b, tr(l), {upper = true}), "cholesky_solve upper", n * n)
      end
    end
  end)

  it("gram: the same scatters, symmetric to the bit; cov likewise", function()
    -- d below the fused kernel's 32 (syrkx) and past it: n short of a
    -- 16-sample stage, d odd (rows padded to 16 bytes), past its 64 x 64
    -- tiles, samples in several chunks with a short last one
    for _, dt in ipairs(floats) do
      for _, case in ipairs({{1, 1, 1}, {37, 5, 3}, {1000, 31, 10}, {257, 130, 2}, {5, 40, 3},
                             {300, 33, 4}, {5000, 70, 4}, {129, 64, 1}}) do
        local n, d, k = table.unpack(case)
        local x, w = input({n, d}, dt), input({k, n}, dt, 0, 1)
        local what = ("gram %s %dx%d, K=%d"):format(dt, n, d, k)
        local g = ml.linalg.gram(x:cuda(), w:cuda())
        agree(g, ml.linalg.gram(x, w), what, n)
        assert.same(g:cpu():totable(), tr(g):cpu():totable(), what .. " symmetric")
        local ws = input({k, n}, dt) -- negative weights too
        agree(ml.linalg.gram(x:cuda(), ws:cuda()), ml.linalg.gram(x, ws), what .. " signed", n)
        agree(ml.linalg.gram(x:cuda()), ml.linalg.gram(x), what .. " x^T x", n)
        agree(ml.linalg.gram(x:t():contiguous():t():cuda()), ml.linalg.gram(x),
              what .. " transposed", n)
        agree(ml.cov(x:cuda(), {rowvar = false}), ml.cov(x, {rowvar = false}), "cov " .. what, n)
        agree(ml.cov(tr(x):cuda(), {aweights = w[1]:cuda()}), ml.cov(tr(x), {aweights = w[1]}),
              "weighted cov " .. what, n)
      end
    end
    -- rows not 16-byte aligned (a view one element into its buffer), and
    -- the weights a transposed view
    local flat = input({300 * 48 + 1}, "float64"):cuda()
    local xv, w = flat:narrow(1, 2, 300 * 48):reshape(300, 48), input({300, 3}, "float64")
    agree(ml.linalg.gram(xv, w:cuda():t()), ml.linalg.gram(xv:cpu(), w:t()), "gram offset view", 300)
    -- more partial sums than one launch holds (2^25 doubles): two groups
    -- of components
    local x, wk = input({64, 1024}, "float64"), input({64, 64}, "float64", 0, 1)
    agree(ml.linalg.gram(x:cuda(), wk:cuda()), ml.linalg.gram(x, wk), "gram 64x1024, K=64", 64)
    -- weights mostly zero, as a mixture's responsibilities are: a
    -- component with none, one with a single sample, one with samples in
    -- several chunks; NaN weights count, -0 ones do not
    for _, case in ipairs({{5000, 70, 4}, {20000, 40, 3}, {300, 33, 5}}) do
      local n, d, k = table.unpack(case)
      local xs = input({n, d}, "float64")
      local ws = input({k, n}, "float64", 0, 1)
      ws = ws * ml.lt(input({k, n}, "float64", 0, 1), 0.2)
      ws[1] = 0
      ws[2] = 0
      ws[{2, n // 2}] = 0.5
      ws[{3, 1}] = -0.0
      local what = ("gram %dx%d, K=%d, sparse weights"):format(n, d, k)
      local g = ml.linalg.gram(xs:cuda(), ws:cuda())
      agree(g, ml.linalg.gram(xs, ws), what, n)
      assert.equal(0, g[1]:abs():max())
      assert.same(g:cpu():totable(), tr(g):cpu():totable(), what .. " symmetric")
      assert.same(g:cpu():totable(), ml.linalg.gram(xs:cuda(), ws:cuda()):cpu():totable(),
                  what .. " the same every run")
      ws[{k, 3}] = 0 / 0
      assert.is_true(ml.linalg.gram(xs:cuda(), ws:cuda())[k]:isnan():all(), what .. " NaN")
    end
  end)

  it("mahalanobis: the same distances, fused (d >= 32) and blocked", function()
    -- n past and short of the 128-sample tiles, d odd (rows padded to 16
    -- bytes), even, below the fused kernel's 32, K d past its 64-column
    -- tiles; the lower triangles of p are not read
    for _, case in ipairs({{1, 1, 1}, {37, 5, 3}, {129, 32, 1}, {300, 33, 3},
                           {131, 64, 2}, {257, 97, 5}, {1000, 130, 2}}) do
      local n, d, k = table.unpack(case)
      local x, mu, p = input({n, d}, "float64"), input({k, d}, "float64"), input({k, d, d}, "float64")
      local what = ("mahalanobis %dx%d, K=%d"):format(n, d, k)
      local c = ml.linalg.mahalanobis(x, mu, p)
      agree(ml.linalg.mahalanobis(x:cuda(), mu:cuda(), p:cuda()), c, what, d)
      local lower = ml.tril(ml.full({k, d, d}, 0 / 0, {dtype = "float64", device = "cpu"}), {k = -1})
      agree(ml.linalg.mahalanobis(x:cuda(), mu:cuda(), (p:triu() + lower):cuda()), c,
            what .. " lower triangle NaN", d)
      -- a view one element into its buffer: rows not 16-byte aligned
      local flat = input({n * d + 1}, "float64"):cuda()
      local xv = flat:narrow(1, 2, n * d):reshape(n, d)
      agree(ml.linalg.mahalanobis(xv, mu:cuda(), p:cuda()),
            ml.linalg.mahalanobis(xv:cpu(), mu, p), what .. " offset view", d)
      agree(ml.linalg.mahalanobis(x:t():contiguous():t():cuda(), mu:cuda(), p:cuda()), c,
            what .. " transposed", d)
      local x32, mu32, p32 = x:astype("float32"), mu:astype("float32"), p:astype("float32")
      agree(ml.linalg.mahalanobis(x32:cuda(), mu32:cuda(), p32:cuda()),
            ml.linalg.mahalanobis(x32, mu32, p32), what .. " float32", d)
    end
    -- more partial sums than one chunk of samples holds (2^25 doubles)
    local x, mu, p = input({270000, 32}, "float64"), input({64, 32}, "float64"),
                     input({64, 32, 32}, "float64")
    local c = ml.linalg.mahalanobis(x, mu, p)
    local worst = (ml.linalg.mahalanobis(x:cuda(), mu:cuda(), p:cuda()) - c:cuda()):abs():max()
    assert.is_true(worst <= EPS.float64 * 40 * scale(c),
                   ("mahalanobis 270000x32, K=64: %g"):format(worst))
    same_error(function() return ml.linalg.mahalanobis(ml.ones(3, 2):cuda(), ml.ones(2, 3):cuda(),
                                                       ml.ones(2, 2, 2):cuda()) end,
               function() return ml.linalg.mahalanobis(ml.ones(3, 2, {device = "cpu"}),
                                                       ml.ones(2, 3, {device = "cpu"}),
                                                       ml.ones(2, 2, 2, {device = "cpu"})) end,
               "mahalanobis shapes")
    local ok, err = pcall(ml.linalg.mahalanobis, ml.ones(3, 2):cuda(),
                          ml.ones(2, 2, {device = "cpu"}), ml.ones(2, 2, 2):cuda())
    assert.is_false(ok)
    assert.truthy(tostring(err):find("linalg.mahalanobis: arrays on different devices", 1, true),
                  err)
  end)

  it("eigh: the same values; vectors through A V = V diag(w)", function()
    for _, dt in ipairs(floats) do
      for _, batch in ipairs(BATCHES) do
        for _, n in ipairs({1, 2, 17, 33, 100}) do
          local a = spd(batch, n, dt) - ml.eye(n, {dtype = dt, device = "cpu"}) * (n + 1)
          local what = ("eigh %s %s"):format(dt, table.concat(a.shape, "x"))
          local w, v = ml.linalg.eigh(a:cuda())
          agree(w, ml.linalg.eigvalsh(a), what, n)
          agree(ml.linalg.eigvalsh(a:cuda(), {UPLO = "U"}), ml.linalg.eigvalsh(a, {UPLO = "U"}),
                what .. " U", n)
          holds(ml.matmul(a:cuda(), v), v * w:unsqueeze(-2), what .. " A V", n)
          holds(ml.matmul(tr(v), v), ml.eye(n, {dtype = dt, device = GPU}):expand(v.shape),
                what .. " V^T V", n)
        end
      end
    end
  end)

  it("solve, inv, det, slogdet: the same results, single, batched and broadcast", function()
    for _, dt in ipairs(floats) do
      for _, batch in ipairs(BATCHES) do
        for _, n in ipairs({1, 4, 31, 65}) do
          local a = input(shape_of(batch, n, n), dt)
                    + ml.eye(n, {dtype = dt, device = "cpu"}) * n
          local b = input(shape_of(batch, n, 3), dt)
          local what = ("lu %s %s"):format(dt, table.concat(a.shape, "x"))
          local cond = 10 * n
          agree(ml.linalg.solve(a:cuda(), b:cuda()), ml.linalg.solve(a, b), what .. " solve", cond)
          agree(ml.linalg.inv(a:cuda()), ml.linalg.inv(a), what .. " inv", cond)
          local dg, dc = ml.linalg.det(a:cuda()), ml.linalg.det(a)
          if type(dc) == "number" then
            -- (float32 overflows to inf on both devices for n = 31 and 65)
            assert.is_true(dg == dc or math.abs(dg - dc) <= 1e3 * EPS[dt] * n * math.abs(dc),
                           what .. " det")
          else
            same(dg, dc, what .. " det", 1e3 * EPS[dt] * n, 0)
          end
          local sg, lg = ml.linalg.slogdet(a:cuda())
          local sc, lc = ml.linalg.slogdet(a)
          same(sg, sc, what .. " sign")
          same(lg, lc, what .. " logdet", 0, 1e3 * EPS[dt] * n)
        end
      end
      -- one A for many right-hand sides, and a 1-D b against a stack
      local a = input({6, 6}, dt) + ml.eye(6, {dtype = dt, device = "cpu"}) * 6
      local b = input({4, 6, 2}, dt)
      agree(ml.linalg.solve(a:cuda(), b:cuda()), ml.linalg.solve(a, b), "solve broadcast A", 60)
      local as = input({4, 6, 6}, dt) + ml.eye(6, {dtype = dt, device = "cpu"}) * 6
      agree(ml.linalg.solve(as:cuda(), b[1][{{}, 1}]:cuda()), ml.linalg.solve(as, b[1][{{}, 1}]),
            "solve vector", 60)
      -- singular
      local s = ml.eye(5, {dtype = dt, device = "cpu"}):expand(3, 5, 5):clone()
      s[{2, 4, 4}] = 0
      local ones = ml.ones(5, {device = "cpu"})
      same_error(function() return ml.linalg.solve(s:cuda(), ones:cuda()) end,
                 function() return ml.linalg.solve(s, ones) end, "singular solve")
      same_error(function() return ml.linalg.inv(s[2]:cuda()) end,
                 function() return ml.linalg.inv(s[2]) end, "singular inv")
      same(ml.linalg.det(s:cuda()), ml.linalg.det(s), "singular det")
    end
  end)

  it("qr: Q R = A with Q orthonormal, and the same |R|", function()
    for _, dt in ipairs(floats) do
      for _, case in ipairs({{1, 1}, {9, 4}, {4, 9}, {33, 33}, {130, 7}}) do
        local m, n = case[1], case[2]
        for _, batch in ipairs({{}, {3}}) do
          local a = input(shape_of(batch, m, n), dt)
          local what = ("qr %s %s"):format(dt, table.concat(a.shape, "x"))
          for _, mode in ipairs({"reduced", "complete"}) do
            local q, r = ml.linalg.qr(a:cuda(), {mode = mode})
            local _, rc = ml.linalg.qr(a, {mode = mode})
            agree(r:abs(), rc:abs(), what .. " " .. mode .. " |R|", m)
            holds(ml.matmul(q, r), a:cuda(), what .. " " .. mode .. " QR", m)
            local k = q:size(-1)
            holds(ml.matmul(tr(q), q), ml.eye(k, {dtype = dt, device = GPU}):expand(
                    shape_of(batch, k, k)), what .. " " .. mode .. " Q^T Q", m)
          end
        end
      end
    end
  end)

  it("svd: the same values; U S Vh = A with orthonormal U and Vh", function()
    for _, dt in ipairs(floats) do
      for _, case in ipairs({{1, 1}, {9, 4}, {4, 9}, {33, 33}, {200, 31}}) do
        local m, n = case[1], case[2]
        local k = math.min(m, n)
        for _, batch in ipairs({{}, {3}}) do
          local a = input(shape_of(batch, m, n), dt)
          local what = ("svd %s %s"):format(dt, table.concat(a.shape, "x"))
          agree(ml.linalg.svd(a:cuda(), {compute_uv = false}),
                ml.linalg.svd(a, {compute_uv = false}), what .. " values", m)
          for _, full in ipairs({true, false}) do
            local u, s, vh = ml.linalg.svd(a:cuda(), {full_matrices = full})
            local uk, vk = u:narrow(-1, 1, k), vh:narrow(-2, 1, k)
            holds(ml.matmul(uk * s:unsqueeze(-2), vk), a:cuda(), what .. " USVh", m)
            holds(ml.matmul(tr(u), u), ml.eye(u:size(-1), {dtype = dt, device = GPU}):expand(
                    shape_of(batch, u:size(-1), u:size(-1))), what .. " U^T U", m)
            holds(ml.matmul(vh, tr(vh)), ml.eye(vh:size(-2), {dtype = dt, device = GPU}):expand(
                    shape_of(batch, vh:size(-2), vh:size(-2))), what .. " Vh Vh^T", m)
          end
        end
      end
    end
  end)

  it("lstsq and norm: the same results", function()
    for _, dt in ipairs(floats) do
      local a, b = input({40, 7}, dt), input({40, 3}, dt)
      local xg, rg, kg, sg = ml.linalg.lstsq(a:cuda(), b:cuda())
      local xc, rc, kc, sc = ml.linalg.lstsq(a, b)
      assert.equal(kc, kg)
      agree(xg, xc, "lstsq x " .. dt, 40)
      agree(rg, rc, "lstsq residuals " .. dt, 40)
      agree(sg, sc, "lstsq s " .. dt, 40)
      local x = input({5, 6, 7}, dt)
      for _, o in ipairs({{}, {ord = "nuc", dim = {1, 3}}, {ord = 2, dim = {3, 2}},
                          {ord = 1, dim = 2}, {ord = -math.huge, dim = {1, 2}},
                          {ord = 3, dim = -1, keepdim = true}}) do
        local g, c = ml.linalg.norm(x:cuda(), o), ml.linalg.norm(x, o)
        if type(c) == "number" then
          assert.is_true(math.abs(g - c) <= 1e3 * EPS[dt] * math.abs(c), "norm")
        else
          agree(g, c, "norm " .. dt, 10)
        end
      end
    end
  end)

  it("refuses operands on two devices", function()
    local a, b = ml.eye(3, {device = "cpu"}), ml.ones(3, {device = "cpu"})
    local ok, err = pcall(ml.linalg.solve, a:cuda(), b)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("linalg.solve: arrays on different devices (cuda:0 and cpu)",
                                     1, true), err)
    ok, err = pcall(ml.linalg.cholesky_solve, b, a:cuda())
    assert.is_false(ok)
    assert.truthy(tostring(err):find("linalg.cholesky_solve: arrays on different devices",
                                     1, true), err)
    ok, err = pcall(ml.linalg.gram, a:cuda(), ml.ones(2, 3, {device = "cpu"}))
    assert.is_false(ok)
    assert.truthy(tostring(err):find("linalg.gram: arrays on different devices", 1, true), err)
    ok, err = pcall(ml.linalg.lstsq, a:cuda(), b)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("linalg.lstsq: arrays on different devices", 1, true), err)
    ok, err = pcall(ml.cov, a:cuda(), {aweights = b})
    assert.is_false(ok)
    assert.truthy(tostring(err):find("cov: arrays on different devices", 1, true), err)
  end)
end)
