-- ml.linalg through identities computed in moonlab (L L^T = A, Q R = A
-- with Q orthonormal, U S Vh = A, A V = V diag(w), ...) on random inputs
-- of awkward sizes (1, odd, prime, stacks, broadcast batches), views
-- (transposes, slices), float32 and float64, well- and ill-conditioned;
-- then every error path and the empty and integer inputs. On the default
-- device (MOONLAB_DEVICE=cuda runs them on a GPU).
local ml = require "moonlab"
require "moonlab.test"

local DEV = ml.device()
local DTYPES = {"float32", "float64"}
-- Relative tolerance of the identities, times the size of the matrices.
local EPS = {float32 = 2e-5, float64 = 1e-13}

-- The message of the error fn raises, without the position prefix.
local function errmsg(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return (tostring(err):gsub("^[^:\n]*:%d+: ", ""))
end

local seed = 100
local function randn(shape, dt)
  seed = seed + 1
  ml.seed(seed)
  return ml.randn(shape, {dtype = dt, device = DEV})
end

local function shape_of(batch, m, n)
  local s = {table.unpack(batch)}
  s[#s + 1] = m
  s[#s + 1] = n
  return s
end

local function tr(x) return x:transpose(-1, -2) end

local function eye(n, dt) return ml.eye(n, {dtype = dt, device = DEV}) end

-- A symmetric positive-definite stack, well conditioned.
local function spd(batch, n, dt)
  local x = randn(shape_of(batch, n, n), dt)
  return ml.matmul(x, tr(x)) + eye(n, dt) * n
end

-- |got - want| within EPS * scale of the matrices, elementwise.
local function close(got, want, dt, scale)
  local s = scale or math.max(1, want:abs():max())
  local n = want:dim() >= 2 and want:size(-1) or 1
  assert.allclose(got, want, {rtol = 0, atol = EPS[dt] * s * (n + 8)})
end

-- The strictly upper (or lower) triangle of a stack, as a mask.
local function strict(n, upper)
  local i = ml.arange(1, n + 1):reshape(n, 1)
  local j = ml.arange(1, n + 1):reshape(1, n)
  return (upper and ml.lt(i, j) or ml.gt(i, j)):to(DEV)
end

local BATCHES = {{}, {1}, {3}, {2, 3}}
local SIZES = {1, 2, 5, 13}

describe("linalg identities", function()
  it("cholesky: L L^T = A and U^T U = A, reading one triangle", function()
    for _, dt in ipairs(DTYPES) do
      for _, batch in ipairs(BATCHES) do
        for _, n in ipairs(SIZES) do
          local a = spd(batch, n, dt)
          local l = ml.linalg.cholesky(a)
          assert.same(a.shape, l.shape)
          assert.equal(dt, l.dtype)
          close(ml.matmul(l, tr(l)), a, dt)
          assert.equal(0, l:masked_select(strict(n, true):expand(l.shape)):abs():sum())
          local u = ml.linalg.cholesky(a, {upper = true})
          close(ml.matmul(tr(u), u), a, dt)
          close(u, tr(l), dt)
          -- the other triangle is not read: NaN there changes nothing
          local lower_only = a:masked_fill(strict(n, true), 0 / 0)
          assert.array_equal(ml.linalg.cholesky(lower_only), l)
          local upper_only = a:masked_fill(strict(n, false), 0 / 0)
          assert.array_equal(ml.linalg.cholesky(upper_only, {upper = true}), u)
        end
      end
    end
  end)

  it("cholesky of views and of an ill-conditioned matrix (Hilbert, order 9)", function()
    for _, dt in ipairs(DTYPES) do
      local big = spd({}, 11, dt)
      local sub = big[{{2, 8}, {2, 8}}] -- a principal submatrix, not contiguous
      assert.is_false(sub:is_contiguous())
      local l = ml.linalg.cholesky(sub)
      close(ml.matmul(l, tr(l)), sub, dt)
      close(ml.linalg.cholesky(sub:t()), l, dt)
    end
    local h = {}
    for i = 1, 9 do
      h[i] = {}
      for j = 1, 9 do h[i][j] = 1 / (i + j - 1) end
    end
    local a = ml.array(h, {device = DEV})
    local l = ml.linalg.cholesky(a)
    close(ml.matmul(l, l:t()), a, "float64")
  end)

  it("solve_triangular: op(A) X = B and X op(A) = B, broadcasting", function()
    for _, dt in ipairs(DTYPES) do
      for _, n in ipairs({1, 4, 7}) do
        local l = ml.linalg.cholesky(spd({3}, n, dt))
        local u = tr(l)
        local b = randn({3, n, 2}, dt)
        local st = ml.linalg.solve_triangular
        close(ml.matmul(l, st(l, b, {lower = true})), b, dt)
        close(ml.matmul(u, st(u, b)), b, dt)
        close(ml.matmul(tr(l), st(l, b, {lower = true, trans = true})), b, dt)
        local bt = tr(b) -- 3 x 2 x n, a view
        close(ml.matmul(st(l, bt, {lower = true, left = false}), l), bt, dt)
        close(ml.matmul(st(l, bt, {lower = true, left = false, trans = true}), tr(l)), bt, dt)
        -- unit_diagonal: the diagonal is taken as ones, whatever it holds
        local unit = l:masked_fill(ml.eye(n, {dtype = "uint8", device = DEV}), 1)
        local x = st(l * 7, b, {lower = true, unit_diagonal = true})
        close(ml.matmul(unit * 7 - eye(n, dt) * 6, x), b, dt, 7 * b:abs():max())
        -- one A for every B, one B for every A, both broadcast
        local l1 = l[1]
        local xs = st(l1, b, {lower = true})
        assert.same({3, n, 2}, xs.shape)
        close(ml.matmul(l1, xs), b, dt)
        local xb = st(l, b[1], {lower = true})
        assert.same({3, n, 2}, xb.shape)
        close(ml.matmul(l, xb), b[1]:expand(3, n, 2), dt)
        local l2 = l[{{1, 2}}]:reshape(2, 1, n, n)
        local x23 = st(l2, b:reshape(1, 3, n, 2), {lower = true})
        assert.same({2, 3, n, 2}, x23.shape)
        close(ml.matmul(l2, x23), b:reshape(1, 3, n, 2):expand(2, 3, n, 2), dt)
        -- a vector
        local v = st(l1, b[1][{{}, 1}], {lower = true})
        assert.same({n}, v.shape)
        close(ml.mv(l1, v), b[1][{{}, 1}], dt)
      end
    end
  end)

  it("cholesky without check: NaN for the matrices that are not positive definite", function()
    for _, dt in ipairs(DTYPES) do
      local a = spd({3}, 4, dt)
      local bad = a:clone()
      bad[2] = -eye(4, dt)
      local l = ml.linalg.cholesky(bad, {check = false})
      -- (a GPU factors a stack and a single matrix by different routines)
      local tol = {rtol = EPS[dt], atol = EPS[dt]}
      assert.allclose(l[1], ml.linalg.cholesky(a[1]), tol)
      assert.allclose(l[3], ml.linalg.cholesky(a[3]), tol)
      assert.is_true(ml.isnan(l[2]):all())
      assert.has_error(function() ml.linalg.cholesky(bad) end)
      assert.array_equal(ml.linalg.cholesky(a), ml.linalg.cholesky(a, {check = false}))
    end
  end)

  it("inv_triangular: A X = I and X A = I, one triangle read, the other zero", function()
    for _, dt in ipairs(DTYPES) do
      for _, batch in ipairs(BATCHES) do
        for _, n in ipairs({1, 2, 5, 13, 33, 70}) do
          local l = ml.linalg.cholesky(spd(batch, n, dt))
          local u = tr(l) -- a view
          local i = eye(n, dt):expand(l.shape)
          local x = ml.linalg.inv_triangular(l, {lower = true})
          assert.same(l.shape, x.shape)
          assert.equal(dt, x.dtype)
          close(ml.matmul(l, x), i, dt, n)
          close(ml.matmul(x, l), i, dt, n)
          assert.equal(0, x:masked_select(strict(n, true):expand(x.shape)):abs():sum())
          local xu = ml.linalg.inv_triangular(u)
          close(ml.matmul(u, xu), i, dt, n)
          close(xu, tr(x), dt, x:abs():max())
          -- the other triangle is not read: NaN there changes nothing
          local lower_only = l:masked_fill(strict(n, true), 0 / 0)
          assert.array_equal(ml.linalg.inv_triangular(lower_only, {lower = true}), x)
          -- unit_diagonal: ones taken for the diagonal, whatever it holds
          local d = ml.eye(n, {dtype = "uint8", device = DEV})
          local unit = l / l:diagonal({dim1 = -2, dim2 = -1}):unsqueeze(-1)
          local xd = ml.linalg.inv_triangular(unit:masked_fill(d, 7),
                                              {lower = true, unit_diagonal = true})
          close(ml.matmul(unit, xd), i, dt, n)
          assert.equal(0, (xd:diagonal({dim1 = -2, dim2 = -1}) - 1):abs():max())
        end
      end
    end
  end)

  it("cholesky_solve: A X = B from A's factor", function()
    for _, dt in ipairs(DTYPES) do
      local a = spd({2}, 6, dt)
      local b = randn({2, 6, 3}, dt)
      local x = ml.linalg.cholesky_solve(b, ml.linalg.cholesky(a))
      close(ml.matmul(a, x), b, dt, 100 * b:abs():max())
      local xu = ml.linalg.cholesky_solve(b, ml.linalg.cholesky(a, {upper = true}),
                                          {upper = true})
      close(xu, x, dt, x:abs():max())
    end
  end)

  it("gram: X^T diag(w) X for weights of any sign, symmetric to the bit", function()
    for _, dt in ipairs(DTYPES) do
      for _, case in ipairs({{1, 1, 1}, {7, 3, 2}, {31, 5, 4}, {13, 1, 3}}) do
        local n, d, k = table.unpack(case)
        local x = randn({n, d}, dt)
        local w = randn({k, n}, dt)
        local g = ml.linalg.gram(x, w)
        assert.same({k, d, d}, g.shape)
        for i = 1, k do
          local want = ml.matmul(x:t(), x * w[i]:reshape(n, 1))
          close(g[i], want, dt, (x * x):sum() * w[i]:abs():max())
        end
        assert.array_equal(g, tr(g))
        local pos = ml.linalg.gram(x, w:abs())
        assert.array_equal(pos, tr(pos))
        local xtx = ml.linalg.gram(x)
        close(xtx, ml.matmul(x:t(), x), dt)
        assert.array_equal(xtx, xtx:t())
        -- the transpose of a contiguous array goes to BLAS as it is
        local xt = randn({d, n}, dt)
        close(ml.linalg.gram(xt:t()), ml.matmul(xt, xt:t()), dt)
        -- views, one component as a vector
        local wt = randn({n, k}, dt)
        close(ml.linalg.gram(xt:t(), wt:t()), ml.linalg.gram(xt:t():contiguous(), wt:t():contiguous()),
              dt)
        local g1 = ml.linalg.gram(x, w[1])
        assert.same({d, d}, g1.shape)
        assert.array_equal(g1, g[1])
      end
    end
    -- float32 only from float32 operands; integers count as float64
    local x32, w64 = randn({9, 4}, "float32"), randn({2, 9}, "float64")
    assert.equal("float64", ml.linalg.gram(x32, w64).dtype)
    assert.equal("float32", ml.linalg.gram(x32, w64:astype("float32")).dtype)
    local xi = ml.array({{1, 2}, {3, 4}, {5, 6}}, {dtype = "int32", device = DEV})
    assert.array_equal(ml.linalg.gram(xi, {1, 0, 2}),
                       ml.array({{51, 62}, {62, 76}}, {dtype = "float64", device = DEV}))
  end)

  it("mahalanobis: |(x_i - mu_k) P_k|^2 through the upper triangles of p", function()
    for _, dt in ipairs(DTYPES) do
      for _, case in ipairs({{1, 1, 1}, {7, 3, 2}, {31, 5, 4}, {13, 1, 3}, {129, 33, 3},
                             {70, 64, 1}}) do
        local n, d, k = table.unpack(case)
        local x, mu, p = randn({n, d}, dt), randn({k, d}, dt), randn({k, d, d}, dt)
        local m = ml.linalg.mahalanobis(x, mu, p)
        assert.same({n, k}, m.shape)
        assert.equal(dt, m.dtype)
        for i = 1, k do
          local y = ml.matmul(x:astype("float64") - mu[i]:astype("float64"):reshape(1, d),
                              p[i]:astype("float64"):triu())
          local want = (y * y):sum(2)
          assert.allclose(m:select(2, i):astype("float64"), want,
                          {rtol = dt == "float32" and 1e-6 or 1e-13, atol = 0})
        end
        -- views, and the lower triangles unread
        local nan = ml.tril(ml.full({k, d, d}, 0 / 0, {dtype = dt, device = DEV}), {k = -1})
        assert.allclose(ml.linalg.mahalanobis(x, mu, p:triu() + nan),
                        m, {rtol = 0, atol = 0})
        assert.allclose(ml.linalg.mahalanobis(x:t():contiguous():t(), mu:t():contiguous():t(), p),
                        m, {rtol = 0, atol = 0})
      end
    end
    -- mixed dtypes compute and return float64; empty inputs give empty
    -- or zero distances
    local x, mu, p = randn({4, 3}, "float32"), randn({2, 3}, "float64"), randn({2, 3, 3}, "float32")
    assert.equal("float64", ml.linalg.mahalanobis(x, mu, p).dtype)
    assert.same({0, 2}, ml.linalg.mahalanobis(randn({0, 3}, "float64"), mu, p).shape)
    assert.same({4, 0}, ml.linalg.mahalanobis(x, randn({0, 3}, "float64"),
                                              randn({0, 3, 3}, "float64")).shape)
    local z = ml.linalg.mahalanobis(randn({4, 0}, "float64"), randn({2, 0}, "float64"),
                                    randn({2, 0, 0}, "float64"))
    assert.array_equal(z, ml.zeros(4, 2, {dtype = "float64", device = DEV}))
  end)

  it("eigh: A V = V diag(w), V orthonormal, w ascending", function()
    for _, dt in ipairs(DTYPES) do
      for _, batch in ipairs(BATCHES) do
        for _, n in ipairs(SIZES) do
          local a = spd(batch, n, dt) - eye(n, dt) * (2 * n)
          local w, v = ml.linalg.eigh(a)
          assert.same(shape_of(batch, n, n), v.shape)
          local scale = a:abs():max()
          close(ml.matmul(a, v), v * w:unsqueeze(-2), dt, scale)
          close(ml.matmul(tr(v), v), eye(n, dt):expand(v.shape), dt)
          if n > 1 then
            local lo, hi = w:narrow(-1, 1, n - 1), w:narrow(-1, 2, n - 1)
            assert.is_true(ml.le(lo, hi):all())
          end
          close(ml.linalg.eigvalsh(a), w, dt, scale)
          local upper_only = a:masked_fill(strict(n, false), 0 / 0)
          close(ml.linalg.eigvalsh(upper_only, {UPLO = "U"}), w, dt, scale)
          close((ml.linalg.eigh(upper_only, {UPLO = "u"})), w, dt, scale)
        end
      end
    end
  end)

  it("solve and inv: A X = B and A inv(A) = I, broadcasting; det and slogdet", function()
    for _, dt in ipairs(DTYPES) do
      for _, n in ipairs({1, 3, 8, 17}) do
        local a = randn({2, n, n}, dt) + eye(n, dt) * n
        local b = randn({2, n, 3}, dt)
        local x = ml.linalg.solve(a, b)
        close(ml.matmul(a, x), b, dt, 10 * b:abs():max())
        close(ml.matmul(a, ml.linalg.inv(a)), eye(n, dt):expand(2, n, n), dt, 10)
        -- numpy 2: a 1-D b is a vector, broadcast against the stack
        local v = b[1][{{}, 1}]
        local xv = ml.linalg.solve(a, v)
        assert.same({2, n}, xv.shape)
        close(ml.matmul(a, xv:unsqueeze(-1)):squeeze(-1), v:expand(2, n), dt, 10)
        -- one A for every B
        local x1 = ml.linalg.solve(a[1], b)
        close(ml.matmul(a[1], x1), b, dt, 10 * b:abs():max())
        -- a view: the transpose
        close(ml.matmul(a[1]:t(), ml.linalg.solve(a[1]:t(), b[1])), b[1], dt,
              10 * b:abs():max())
        -- det: of a triangular matrix, the product of its diagonal
        local l = ml.linalg.cholesky(spd({}, n, dt))
        local prod = 1
        for i = 1, n do prod = prod * l[{i, i}] end
        assert.allclose(ml.linalg.det(l), prod, {rtol = 100 * EPS[dt]})
        local s, logdet = ml.linalg.slogdet(l:t() * -1)
        assert.equal(n % 2 == 1 and -1 or 1, s)
        assert.allclose(logdet, math.log(prod), {rtol = 0, atol = 100 * n * EPS[dt]})
        local d = ml.linalg.det(a)
        assert.same({2}, d.shape)
        assert.allclose(d[1], ml.linalg.det(a[1]), {rtol = 10 * EPS[dt]})
      end
      -- the sign follows the row interchanges
      local p = ml.array({{0, 1, 0}, {0, 0, 1}, {1, 0, 0}}, {dtype = dt, device = DEV})
      assert.equal(1, ml.linalg.det(p))
      local swap = ml.array({{0, 0, 1}, {0, 1, 0}, {1, 0, 0}}, {dtype = dt, device = DEV})
      assert.equal(-1, ml.linalg.det(swap))
    end
  end)

  it("qr: Q R = A, Q orthonormal, R upper triangular, in every mode", function()
    for _, dt in ipairs(DTYPES) do
      for _, case in ipairs({{1, 1}, {7, 3}, {3, 7}, {5, 5}, {13, 2}}) do
        local m, n = case[1], case[2]
        local k = math.min(m, n)
        for _, batch in ipairs({{}, {2}}) do
          local a = randn(shape_of(batch, m, n), dt)
          local q, r = ml.linalg.qr(a)
          assert.same(shape_of(batch, m, k), q.shape)
          assert.same(shape_of(batch, k, n), r.shape)
          close(ml.matmul(q, r), a, dt)
          close(ml.matmul(tr(q), q), eye(k, dt):expand(shape_of(batch, k, k)), dt)
          local rk = r:narrow(-1, 1, k)
          assert.equal(0, rk:masked_select(strict(k, false):expand(rk.shape)):abs():sum())
          local qc, rc = ml.linalg.qr(a, {mode = "complete"})
          assert.same(shape_of(batch, m, m), qc.shape)
          assert.same(shape_of(batch, m, n), rc.shape)
          close(ml.matmul(qc, rc), a, dt)
          close(ml.matmul(tr(qc), qc), eye(m, dt):expand(shape_of(batch, m, m)), dt)
          close(ml.linalg.qr(a, {mode = "r"}), r, dt)
        end
      end
      -- a view: the transpose of a tall matrix
      local a = randn({9, 4}, dt)
      local q, r = ml.linalg.qr(a:t())
      close(ml.matmul(q, r), a:t(), dt)
    end
  end)

  it("svd: U diag(S) Vh = A, U and Vh orthonormal, S descending", function()
    for _, dt in ipairs(DTYPES) do
      for _, case in ipairs({{1, 1}, {7, 3}, {3, 7}, {5, 5}, {2, 11}}) do
        local m, n = case[1], case[2]
        local k = math.min(m, n)
        for _, batch in ipairs({{}, {3}}) do
          local a = randn(shape_of(batch, m, n), dt)
          local u, s, vh = ml.linalg.svd(a, {full_matrices = false})
          assert.same(shape_of(batch, m, k), u.shape)
          assert.same(shape_of(batch, k, n), vh.shape)
          close(ml.matmul(u * s:unsqueeze(-2), vh), a, dt)
          close(ml.matmul(tr(u), u), eye(k, dt):expand(shape_of(batch, k, k)), dt)
          close(ml.matmul(vh, tr(vh)), eye(k, dt):expand(shape_of(batch, k, k)), dt)
          if k > 1 then
            assert.is_true(ml.ge(s:narrow(-1, 1, k - 1), s:narrow(-1, 2, k - 1)):all())
          end
          assert.is_true(ml.ge(s, 0):all())
          local uf, sf, vhf = ml.linalg.svd(a)
          assert.same(shape_of(batch, m, m), uf.shape)
          assert.same(shape_of(batch, n, n), vhf.shape)
          close(sf, s, dt)
          close(ml.matmul(tr(uf), uf), eye(m, dt):expand(shape_of(batch, m, m)), dt)
          close(ml.matmul(vhf, tr(vhf)), eye(n, dt):expand(shape_of(batch, n, n)), dt)
          close(ml.linalg.svd(a, {compute_uv = false}), s, dt)
        end
      end
    end
  end)

  it("lstsq: the normal equations hold, and norm and cov agree with sums", function()
    for _, dt in ipairs(DTYPES) do
      local a, b = randn({11, 4}, dt), randn({11, 2}, dt)
      local x, res, rank, s = ml.linalg.lstsq(a, b)
      assert.equal(4, rank)
      assert.same({4}, s.shape)
      close(ml.matmul(a:t(), ml.matmul(a, x) - b), ml.zeros(4, 2, {dtype = dt, device = DEV}),
            dt, 10 * a:abs():max() * b:abs():max())
      local r = ml.matmul(a, x) - b
      close(res, (r * r):sum(1), dt, res:abs():max())
      local xv = ml.linalg.lstsq(a, b[{{}, 1}])
      assert.same({4}, xv.shape)
      close(xv, x[{{}, 1}], dt, x:abs():max())
      -- norms
      local m = randn({4, 6}, dt)
      assert.allclose(ml.linalg.norm(m), math.sqrt((m * m):sum()), {rtol = 10 * EPS[dt]})
      assert.allclose(ml.linalg.norm(m, {ord = 2}), ml.linalg.svd(m, {compute_uv = false})[1],
                      {rtol = 10 * EPS[dt]})
      assert.allclose(ml.linalg.norm(m, {dim = 2, ord = 1}), m:abs():sum(2),
                      {rtol = 10 * EPS[dt]})
      -- cov: centred products over n - 1
      local c = ml.cov(m)
      local xc = m - m:mean(2, {keepdim = true})
      close(c, ml.matmul(xc, xc:t()) / 5, dt)
      assert.array_equal(c, c:t())
    end
  end)
end)

describe("linalg inputs", function()
  it("compute integer inputs in float64, and promote mixed dtypes", function()
    local a = ml.array({{4, 2}, {2, 3}}, {device = DEV})
    assert.equal("int64", a.dtype)
    local l = ml.linalg.cholesky(a)
    assert.equal("float64", l.dtype)
    assert.allclose(l, {{2, 0}, {1, math.sqrt(2)}})
    local x = ml.linalg.solve(a:astype("float32"), ml.array({8, 8}, {device = DEV}))
    assert.equal("float64", x.dtype)
    assert.allclose(x, {1, 2}, {rtol = 1e-6})
    assert.equal("float32", ml.linalg.solve(a:astype("float32"), x:astype("float32")).dtype)
    assert.equal("float64", ml.linalg.inv(a:astype("uint8")).dtype)
    local x2 = ml.linalg.inv_triangular(a)
    assert.equal("float64", x2.dtype)
    assert.allclose(x2, {{0.25, -1 / 6}, {0, 1 / 3}})
    assert.equal("float32", ml.linalg.inv_triangular(a:astype("float32")).dtype)
    assert.equal("float64", ml.cov(a).dtype)
    assert.equal("float32", ml.linalg.eigvalsh(a:astype("float32")).dtype)
    assert.allclose(ml.linalg.det({{1, 2}, {3, 4}}), -2)
  end)

  it("give empty results for empty matrices and stacks", function()
    local function z(...) return ml.zeros({...}, {device = DEV}) end
    assert.same({0, 0}, ml.linalg.cholesky(z(0, 0)).shape)
    assert.same({0, 3, 3}, ml.linalg.cholesky(z(0, 3, 3)).shape)
    assert.same({0, 0}, ml.linalg.inv(z(0, 0)).shape)
    assert.equal(1, ml.linalg.det(z(0, 0)))
    local s, l = ml.linalg.slogdet(z(2, 0, 0))
    assert.array_equal(s, {1, 1})
    assert.array_equal(l, {0, 0})
    assert.same({0}, ml.linalg.det(z(0, 4, 4)).shape)
    assert.same({3, 0}, ml.linalg.solve(ml.eye(3, {device = DEV}), z(3, 0)).shape)
    assert.same({0, 2}, ml.linalg.solve(z(0, 0), z(0, 2)).shape)
    assert.same({0, 3, 2}, ml.linalg.solve_triangular(ml.eye(3, {device = DEV}), z(0, 3, 2)).shape)
    assert.same({2, 0, 0}, ml.linalg.inv_triangular(z(2, 0, 0)).shape)
    assert.same({0, 4, 4}, ml.linalg.inv_triangular(z(0, 4, 4)).shape)
    local w, v = ml.linalg.eigh(z(0, 0))
    assert.same({0}, w.shape)
    assert.same({0, 0}, v.shape)
    -- numpy's shapes for qr and svd of empty matrices
    local q, r = ml.linalg.qr(z(3, 0))
    assert.same({3, 0}, q.shape)
    assert.same({0, 0}, r.shape)
    q, r = ml.linalg.qr(z(3, 0), {mode = "complete"})
    assert.array_equal(q, ml.eye(3))
    assert.same({3, 0}, r.shape)
    local u, sv, vh = ml.linalg.svd(z(0, 3))
    assert.same({0, 0}, u.shape)
    assert.same({0}, sv.shape)
    assert.array_equal(vh, ml.eye(3))
    u, sv, vh = ml.linalg.svd(z(3, 0), {full_matrices = false})
    assert.same({3, 0}, u.shape)
    assert.same({0, 0}, vh.shape)
    -- gram with no samples is zero; cov of no variables is 0 x 0
    assert.array_equal(ml.linalg.gram(z(0, 3), z(2, 0)), ml.zeros(2, 3, 3))
    assert.same({0, 0}, ml.cov(z(0, 5)).shape)
    assert.is_true(ml.cov(z(3, 0)):isnan():all())
  end)

  it("leave the inputs as they were", function()
    local a = spd({}, 5, "float64")
    local b = randn({5, 2}, "float64")
    local a0, b0 = a:clone(), b:clone()
    ml.linalg.cholesky(a)
    ml.linalg.solve(a, b)
    ml.linalg.solve_triangular(a, b, {lower = true})
    ml.linalg.eigh(a)
    ml.linalg.qr(a)
    ml.linalg.svd(a)
    ml.linalg.det(a)
    ml.linalg.inv_triangular(a)
    ml.linalg.gram(a, b:t())
    assert.array_equal(a, a0)
    assert.array_equal(b, b0)
  end)
end)

describe("linalg errors", function()
  local function dev(t) return ml.array(t, {device = DEV}) end

  it("name the batch element and the minor of a matrix that is not positive definite", function()
    local a = ml.eye(5, {device = DEV})
    a[{5, 5}] = -1
    assert.equal("linalg.cholesky: the matrix is not positive definite (the leading "
                 .. "minor of order 5 is not positive)",
                 errmsg(ml.linalg.cholesky, a))
    local stack = ml.eye(5, {device = DEV}):expand(2, 3, 5, 5):clone()
    stack[{1, 3}] = a
    stack[{2, 1}] = a
    assert.equal("linalg.cholesky: the matrix is not positive definite (batch element 3: "
                 .. "the leading minor of order 5 is not positive)",
                 errmsg(ml.linalg.cholesky, stack))
    local b = dev({{1, 2}, {2, 1}})
    assert.equal("linalg.cholesky: the matrix is not positive definite (the leading "
                 .. "minor of order 2 is not positive)",
                 errmsg(ml.linalg.cholesky, b, {upper = true}))
    assert.truthy(errmsg(ml.linalg.cholesky, dev({{0 / 0}})):match("not positive definite"))
  end)

  it("name the batch element and the zero pivot of a singular matrix", function()
    local a = ml.eye(5, {device = DEV})
    a[{4, 4}] = 0
    assert.equal("linalg.solve: the matrix is singular (U[4][4] is zero)",
                 errmsg(ml.linalg.solve, a, ml.ones(5, {device = DEV})))
    local stack = ml.eye(5, {device = DEV}):expand(2, 5, 5):clone()
    stack[2] = a
    assert.equal("linalg.inv: the matrix is singular (batch element 2: U[4][4] is zero)",
                 errmsg(ml.linalg.inv, stack))
    -- det and slogdet: 0, and 0 and -inf
    assert.equal(0, ml.linalg.det(a))
    local s, l = ml.linalg.slogdet(a)
    assert.equal(0, s)
    assert.equal(-math.huge, l)
    -- inv_triangular names the zero on the diagonal, or gives NaN unchecked
    assert.equal("linalg.inv_triangular: the matrix is singular (A[4][4] is zero)",
                 errmsg(ml.linalg.inv_triangular, a))
    assert.equal("linalg.inv_triangular: the matrix is singular (batch element 2: "
                 .. "A[4][4] is zero)", errmsg(ml.linalg.inv_triangular, stack, {lower = true}))
    local xs = ml.linalg.inv_triangular(stack, {check = false})
    assert.array_equal(xs[1], ml.eye(5))
    assert.is_true(xs[2]:isnan():all())
    assert.array_equal(ml.linalg.inv_triangular(a, {unit_diagonal = true}), ml.eye(5))
    -- solve_triangular divides by the zero: inf and NaN, no error
    local x = ml.linalg.solve_triangular(a, ml.ones(5, {device = DEV}))
    assert.is_false(x:isfinite():all())
  end)

  it("reject shapes that are not stacks of (square) matrices, or do not fit", function()
    local v, r = ml.ones(5, {device = DEV}), ml.ones(3, 4, {device = DEV})
    local sq = ml.eye(3, {device = DEV})
    local cases = {
      {"linalg.cholesky: expects a matrix or a stack of matrices, got shape 5",
       ml.linalg.cholesky, v},
      {"linalg.cholesky: expects square matrices, got shape 3x4", ml.linalg.cholesky, r},
      {"linalg.eigh: expects square matrices, got shape 3x4", ml.linalg.eigh, r},
      {"linalg.eigvalsh: expects square matrices, got shape 3x4", ml.linalg.eigvalsh, r},
      {"linalg.inv: expects square matrices, got shape 3x4", ml.linalg.inv, r},
      {"linalg.det: expects square matrices, got shape 3x4", ml.linalg.det, r},
      {"linalg.slogdet: expects square matrices, got shape 3x4", ml.linalg.slogdet, r},
      {"linalg.qr: expects a matrix or a stack of matrices, got shape 5", ml.linalg.qr, v},
      {"linalg.svd: expects a matrix or a stack of matrices, got shape scalar",
       ml.linalg.svd, ml.ones({}, {device = DEV})},
      {"linalg.solve: shapes 3x3 and 4x2 are not aligned (3 != 4)",
       ml.linalg.solve, sq, ml.ones(4, 2, {device = DEV})},
      {"linalg.solve: shapes 2x3x3 and 3x3x2 do not broadcast in the batch dimensions",
       ml.linalg.solve, sq:expand(2, 3, 3), ml.ones(3, 3, 2, {device = DEV})},
      {"linalg.solve_triangular: shapes 3x3 and 5 are not aligned (3 != 5)",
       ml.linalg.solve_triangular, sq, v},
      {"linalg.solve_triangular: shapes 3x3 and 2x4 are not aligned (3 != 4)",
       ml.linalg.solve_triangular, sq, ml.ones(2, 4, {device = DEV}), {left = false}},
      {"linalg.solve_triangular: b must be a vector or matrices, got shape scalar",
       ml.linalg.solve_triangular, sq, ml.ones({}, {device = DEV})},
      {"linalg.inv_triangular: expects square matrices, got shape 3x4",
       ml.linalg.inv_triangular, r},
      {"linalg.inv_triangular: expects a matrix or a stack of matrices, got shape 5",
       ml.linalg.inv_triangular, v},
      {"linalg.cholesky_solve: shapes 4x2 and 3x3 are not aligned (4 != 3)",
       ml.linalg.cholesky_solve, ml.ones(4, 2, {device = DEV}), sq},
      {"linalg.gram: x must be a matrix (n x d), got shape 5", ml.linalg.gram, v},
      {"linalg.gram: weights of shape 2x4 do not fit x of shape 3x4 (expected K x 3 or 3)",
       ml.linalg.gram, r, ml.ones(2, 4, {device = DEV})},
      {"linalg.mahalanobis: expects x (n x d), mu (K x d) and p (K x d x d), got shapes 3x4, 5 and 3x3",
       ml.linalg.mahalanobis, r, v, sq},
      {"linalg.mahalanobis: expects x (n x d), mu (K x d) and p (K x d x d), got shapes 3x4, 2x4 and 3x4x4",
       ml.linalg.mahalanobis, r, ml.ones(2, 4, {device = DEV}), ml.ones(3, 4, 4, {device = DEV})},
      {"linalg.lstsq: a has 3 rows but b has 5", ml.linalg.lstsq, r, v},
      {"linalg.lstsq: a must be a matrix, got shape 5", ml.linalg.lstsq, v, v},
      {"linalg.norm: invalid norm order 'fro' for vectors",
       ml.linalg.norm, v, {ord = "fro"}},
      {"linalg.norm: invalid norm order 3 for matrices", ml.linalg.norm, r, {ord = 3}},
      {"linalg.norm: invalid norm order nucl for matrices", ml.linalg.norm, r, {ord = "nucl"}},
      {"linalg.norm: dimension 3 out of range for 2 dimensions",
       ml.linalg.norm, r, {dim = 3}},
      {"linalg.norm: dimension 2 given twice", ml.linalg.norm, r, {dim = {2, -1}}},
      {"linalg.norm: dim must be one dimension or a pair, got 3",
       ml.linalg.norm, r, {dim = {1, 2, 1}}},
      {"linalg.norm: ord without dim needs a 1-D or 2-D array, got 3 dimensions",
       ml.linalg.norm, ml.ones(2, 2, 2), {ord = 1}},
      {"cov: x has more than 2 dimensions (shape 2x2x2)", ml.cov, ml.ones(2, 2, 2)},
      {"cov: fweights must be integers", ml.cov, r, {fweights = {1, 2.5, 1, 1}}},
      {"cov: fweights cannot be negative", ml.cov, r, {fweights = {1, -2, 1, 1}}},
      {"cov: aweights has 3 elements for 4 observations", ml.cov, r, {aweights = {1, 2, 1}}},
      {"cov: aweights must be 1-D, got shape 2x2", ml.cov, r, {aweights = {{1, 2}, {1, 1}}}},
    }
    for _, c in ipairs(cases) do
      assert.equal(c[1], errmsg(c[2], table.unpack(c, 3)))
    end
  end)

  it("check option values that a type cannot express", function()
    local sq = ml.eye(3, {device = DEV})
    assert.equal('linalg.eigh: UPLO must be "L" or "U", not "X"',
                 errmsg(ml.linalg.eigh, sq, {UPLO = "X"}))
    assert.equal("linalg.qr: unknown mode 'raw' (reduced, complete or r)",
                 errmsg(ml.linalg.qr, sq, {mode = "raw"}))
    assert.equal("cholesky: unknown option 'uper' (did you mean 'upper'?)",
                 errmsg(ml.linalg.cholesky, sq, {uper = true}))
  end)
end)
