-- The default device: MOONLAB_DEVICE picks it and must name a usable one;
-- without it the first GPU when there is one, else the CPU. And the
-- devices' allocators as ml.memory, ml.empty_cache and ml.cuda report them.
local ml = require "moonlab"

local bin = os.getenv("MOONLAB_BIN") or "bin/moonlab"

-- Runs bin/moonlab -e code with MOONLAB_DEVICE=device (unset for nil);
-- returns its output (stdout and stderr) and whether it succeeded.
local function run(device, code)
  local env = device and ("MOONLAB_DEVICE='%s' "):format(device) or "env -u MOONLAB_DEVICE "
  local p = io.popen(("%s%s -e '%s' 2>&1"):format(env, bin, code))
  local out = p:read("a")
  return out, p:close()
end

describe("MOONLAB_DEVICE", function()
  local gpus = ml.cuda.device_count()

  it("defaults to the first GPU when there is one, else the CPU", function()
    local out, ok = run(nil, "io.write(ml.device())")
    assert.is_true(ok)
    assert.equal(gpus > 0 and "cuda:0" or "cpu", out)
  end)

  it("picks the CPU, or a GPU that exists", function()
    assert.equal("cpu", (run("cpu", "io.write(ml.device())")))
    if gpus > 0 then
      assert.equal("cuda:" .. (gpus - 1), (run("cuda:" .. (gpus - 1), "io.write(ml.device())")))
    end
  end)

  it("refuses a GPU that is missing and says why, rather than falling back", function()
    local out, ok = run("cuda:" .. gpus, "io.write(ml.device())")
    assert.is_falsy(ok)
    assert.truthy(out:find(("MOONLAB_DEVICE=cuda:%d: device cuda:%d is not present (%d cuda device"):format(
      gpus, gpus, gpus), 1, true), out)
    if gpus == 0 then
      -- the driver's reason, or a build without CUDA
      assert.truthy(out:find("0 cuda devices: ", 1, true) or out:find("built without CUDA", 1, true), out)
      out, ok = run("cuda", "io.write(ml.device())")
      assert.is_falsy(ok)
      assert.truthy(out:find("MOONLAB_DEVICE=cuda: device cuda:0", 1, true), out)
    end
  end)

  it("refuses a name that is not a device", function()
    local out, ok = run("gpu", "io.write(ml.device())")
    assert.is_falsy(ok)
    assert.truthy(out:find("MOONLAB_DEVICE=gpu: not a device (cpu, cuda or cuda:N)", 1, true), out)
  end)
end)

describe("device memory", function()
  it("counts the arrays of a device and what its allocator caches", function()
    collectgarbage()
    local before = ml.memory("cpu")
    local x <close> = ml.zeros(1000, {device = "cpu"})
    local m = ml.memory("cpu")
    assert.equal(before.arrays + 1, m.arrays)
    assert.equal(before.allocated + 8000, m.allocated)
    assert.equal(0, m.cached)
    assert.is_true(m.peak >= m.allocated)
    ml.empty_cache("cpu")
  end)

  it("names the operation for a bad device", function()
    local ok, err = pcall(ml.memory, "bogus")
    assert.is_false(ok)
    assert.truthy(err:find("memory: unknown device 'bogus'", 1, true), err)
    ok, err = pcall(ml.empty_cache, "cuda:99")
    assert.is_false(ok)
    assert.truthy(err:find("device cuda:99 is not present", 1, true), err)
  end)

  it("reports a GPU's allocator through ml.cuda", function()
    if not ml.cuda.available() then
      assert.has_error(function() ml.cuda.memory() end)
      return
    end
    local x <close> = ml.zeros(1000, {device = "cuda"})
    local m = ml.cuda.memory()
    assert.is_true(m.allocated >= 8000 and m.total > m.allocated and m.peak >= m.allocated)
    assert.equal(m.cached, ml.memory("cuda").cached)
    assert.truthy(#ml.cuda.device_name() > 0)
  end)
end)
