local ml = require "moonlab"

describe("array basics", function()
  it("reports shape, dtype, ndim and device", function()
    local x = ml.zeros(2, 3)
    assert.same({2, 3}, x.shape)
    assert.equal("float64", x.dtype)
    assert.equal(2, x.ndim)
    assert.equal(ml.device(), x.device)
    assert.equal(6, x:numel())
    assert.same({3, 1}, x:stride())
  end)
end)
