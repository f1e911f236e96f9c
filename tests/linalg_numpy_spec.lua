-- ml.linalg and ml.cov against NumPy and SciPy: the fixtures of
-- tests/fixtures/linalg/make.py (inputs and numpy.linalg's, scipy.linalg's
-- and numpy.cov's answers, float64), on the default device, in float64 and
-- in float32 (inputs rounded to float32, looser tolerances). Eigenvectors
-- and singular vectors are checked through identities in
-- linalg_decomp_spec.lua; here their values only.
local ml = require "moonlab"
require "moonlab.test"

local DIR = "tests/fixtures/linalg/"
local DEV = ml.device()

local function load(case, name)
  return ml.load_npy(DIR .. case .. "_" .. name .. ".npy"):to(DEV)
end

local function num(case, name) return load(case, name):item() end

-- Tolerances against the float64 reference: float64 results of
-- well-conditioned inputs, of ill-conditioned ones (condition numbers near
-- 1e10: forward errors up to about cond * eps), and float32 results.
local TOL = {
  float64 = {rtol = 1e-10, atol = 1e-12},
  ill = {rtol = 1e-5, atol = 1e-7},
  float32 = {rtol = 2e-4, atol = 2e-4},
}

local function each_dtype(fn)
  fn("float64", TOL.float64)
  fn("float32", TOL.float32)
end

describe("linalg against numpy", function()
  it("cholesky: lower and upper factors", function()
    for _, case in ipairs({"chol1", "chol7", "chol13", "cholb"}) do
      each_dtype(function(dt, tol)
        local a = load(case, "a"):astype(dt)
        local l = ml.linalg.cholesky(a)
        assert.equal(dt, l.dtype)
        assert.allclose(l, load(case, "l"), tol)
        assert.allclose(ml.linalg.cholesky(a, {upper = true}), load(case, "u"), tol)
      end)
    end
    assert.allclose(ml.linalg.cholesky(load("cholill", "a")), load("cholill", "l"), TOL.ill)
  end)

  it("solve_triangular: every side, triangle and transpose; cholesky_solve", function()
    each_dtype(function(dt, tol)
      local l, b, bt = load("tri", "l"):astype(dt), load("tri", "b"):astype(dt),
                       load("tri", "bt"):astype(dt)
      local st = ml.linalg.solve_triangular
      assert.allclose(st(l, b, {lower = true}), load("tri", "lower"), tol)
      assert.allclose(st(l, b, {lower = true, trans = true}), load("tri", "lower_t"), tol)
      assert.allclose(st(l:t(), b), load("tri", "upper"), tol)
      assert.allclose(st(l, b, {lower = true, unit_diagonal = true}), load("tri", "unit"), tol)
      assert.allclose(st(l, bt, {lower = true, left = false}), load("tri", "right"), tol)
      assert.allclose(st(l, bt, {lower = true, left = false, trans = true}),
                      load("tri", "right_t"), tol)
      assert.allclose(ml.linalg.cholesky_solve(b, l), load("tri", "cho"), tol)
      assert.allclose(ml.linalg.cholesky_solve(b, l:t(), {upper = true}), load("tri", "cho"),
                      tol)
      assert.allclose(ml.linalg.cholesky_solve(b[{{}, 1}], l), load("tri", "cho_vec"), tol)
    end)
  end)

  it("solve, inv, det and slogdet", function()
    for _, case in ipairs({"lu1", "lu5", "lu11", "luill"}) do
      each_dtype(function(dt, tol)
        if case == "luill" then
          if dt == "float32" then return end
          tol = TOL.ill
        end
        local a, b = load(case, "a"):astype(dt), load(case, "b"):astype(dt)
        assert.allclose(ml.linalg.solve(a, b), load(case, "x"), tol)
        assert.allclose(ml.linalg.inv(a), load(case, "inv"), tol)
        local det = ml.linalg.det(a)
        assert.equal("number", type(det))
        assert.allclose(det, num(case, "det"), tol)
        local s, l = ml.linalg.slogdet(a)
        assert.equal(num(case, "sign"), s)
        assert.allclose(l, num(case, "logdet"), {rtol = tol.rtol, atol = 1e-6})
      end)
    end
    each_dtype(function(dt, tol)
      local a = load("lub", "a"):astype(dt)
      assert.allclose(ml.linalg.inv(a), load("lub", "inv"), tol)
      local det = ml.linalg.det(a)
      assert.same({3, 2}, det.shape)
      assert.allclose(det, load("lub", "det"), tol)
      local s, l = ml.linalg.slogdet(a)
      assert.array_equal(s, load("lub", "sign"):astype(dt))
      assert.allclose(l, load("lub", "logdet"), {rtol = tol.rtol, atol = 1e-6})
    end)
  end)

  it("eigvalsh and eigh's values, ascending", function()
    for _, case in ipairs({"eig1", "eig6", "eig13", "eigb"}) do
      each_dtype(function(dt, tol)
        local a = load(case, "a"):astype(dt)
        assert.allclose(ml.linalg.eigvalsh(a), load(case, "w"), tol)
        assert.allclose((ml.linalg.eigh(a, {UPLO = "U"})), load(case, "w"), tol)
      end)
    end
    assert.allclose(ml.linalg.eigvalsh(load("eigill", "a")), load("eigill", "w"),
                    {rtol = 1e-5, atol = 1e-15})
  end)

  it("qr's R (up to the signs of its rows) and svd's values", function()
    for _, case in ipairs({"m1x1", "m7x3", "m3x7", "m5x5", "mb", "mill"}) do
      each_dtype(function(dt, tol)
        if case == "mill" and dt == "float32" then return end
        local a = load(case, "a"):astype(dt)
        local r = ml.linalg.qr(a, {mode = "r"})
        assert.allclose(r:abs(), load(case, "absr"), tol)
        local _, rc = ml.linalg.qr(a, {mode = "complete"})
        assert.allclose(rc:abs(), load(case, "absrc"), tol)
        assert.allclose(ml.linalg.svd(a, {compute_uv = false}), load(case, "s"),
                        {rtol = tol.rtol, atol = case == "mill" and 1e-15 or tol.atol})
        local _, s = ml.linalg.svd(a, {full_matrices = false})
        assert.allclose(s, load(case, "s"), {rtol = tol.rtol, atol = 1e-6})
      end)
    end
  end)

  it("lstsq: over- and underdetermined, rank deficient, a vector b", function()
    for _, case in ipairs({"ls_over", "ls_under", "ls_vec", "ls_rank"}) do
      each_dtype(function(dt, tol)
        local a, b = load(case, "a"):astype(dt), load(case, "b"):astype(dt)
        local x, res, rank, s = ml.linalg.lstsq(a, b)
        assert.allclose(x, load(case, "x"), tol)
        assert.equal(num(case, "rank"), rank)
        assert.allclose(s, load(case, "s"), {rtol = tol.rtol, atol = 1e-6})
        local want = load(case, "res")
        assert.same(want.shape, res.shape)
        if want:numel() > 0 then assert.allclose(res, want, tol) end
      end)
    end
  end)

  it("norm: vector and matrix norms, dimensions, keepdim", function()
    local x, v = load("norm", "x"), load("norm", "v")
    local m = x[{{}, {}, 1}]
    local function same(got, name)
      assert.allclose(got, load("norm", name), TOL.float64)
    end
    local norm = ml.linalg.norm
    same(norm(v), "v_none")
    same(norm(v, {ord = math.huge}), "v_inf")
    same(norm(v, {ord = -math.huge}), "v_ninf")
    same(norm(v, {ord = 0}), "v_0")
    same(norm(v, {ord = 1}), "v_1")
    same(norm(v, {ord = 3}), "v_3")
    same(norm(v, {ord = 0.5}), "v_half")
    same(norm(m), "m_none")
    same(norm(m, {ord = "fro"}), "m_fro")
    same(norm(m, {ord = "nuc"}), "m_nuc")
    same(norm(m, {ord = 2}), "m_2")
    same(norm(m, {ord = -2}), "m_n2")
    same(norm(m, {ord = 1}), "m_1")
    same(norm(m, {ord = -1}), "m_n1")
    same(norm(m, {ord = math.huge}), "m_inf")
    same(norm(m, {ord = -math.huge}), "m_ninf")
    same(norm(x), "x_all")
    same(norm(x, {dim = 2}), "x_d2")
    same(norm(x, {ord = 1, dim = -1}), "x_d3_1")
    same(norm(x, {dim = {1, 3}}), "x_d13_fro")
    same(norm(x, {ord = 1, dim = {3, 1}}), "x_d31_1")
    same(norm(x, {ord = 2, dim = {1, 2}}), "x_d12_2")
    same(norm(x, {ord = "nuc", dim = {2, 1}}), "x_d21_nuc")
    local k = norm(x, {ord = math.huge, dim = {2, 3}, keepdim = true})
    assert.same({4, 1, 1}, k.shape)
    same(k, "x_d23_inf_keep")
    assert.equal("number", type(norm(m, {ord = 2})))
  end)

  it("cov: numpy.cov's options", function()
    each_dtype(function(dt, tol)
      local x = load("cov", "x"):astype(dt)
      local fw, aw = load("cov", "fw"), load("cov", "aw")
      local function same(got, name)
        assert.equal(dt, got.dtype)
        assert.allclose(got, load("cov", name), tol)
      end
      same(ml.cov(x), "plain")
      same(ml.cov(x, {bias = true}), "bias")
      same(ml.cov(x, {ddof = 3}), "ddof3")
      same(ml.cov(x:t(), {rowvar = false}), "cols")
      same(ml.cov(x, {fweights = fw}), "fw_c")
      same(ml.cov(x, {aweights = aw}), "aw_c")
      same(ml.cov(x, {fweights = fw, aweights = aw}), "both")
      same(ml.cov(x, {fweights = fw:totable(), aweights = aw, bias = true}), "both_bias")
      same(ml.cov(x, {fweights = fw, aweights = aw, ddof = 0}), "both_ddof0")
      local one = ml.cov(x[1])
      assert.equal(0, one:dim())
      same(one, "one")
      same(ml.cov(x[{{1, 1}}]), "row")
    end)
  end)

  it("gram: weighted scatters of any sign, and x^T x", function()
    each_dtype(function(dt, tol)
      local x, w = load("gram", "x"):astype(dt), load("gram", "w"):astype(dt)
      local g = ml.linalg.gram(x, w)
      assert.same({3, 5, 5}, g.shape)
      assert.allclose(g, load("gram", "g"), tol)
      assert.allclose(ml.linalg.gram(x), load("gram", "xtx"), tol)
      assert.allclose(ml.linalg.gram(x, w[2]), load("gram", "g")[2], tol)
    end)
  end)
end)
