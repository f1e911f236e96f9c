-- Registering a backend checks that every entry of every table is filled
-- (src/core/backend.c): tests/c/backend_register.c registers incomplete
-- and complete tables and prints what registration answered.
local bin = "build/tests/backend_register"

describe("backend registration", function()
  local lines = {}

  setup(function()
    local p = io.open(bin)
    assert(p, bin .. " is missing: `make test` builds it")
    p:close()
    local out = io.popen(bin)
    for line in out:lines() do
      local what, answer = line:match("^(.-): (.*)$")
      lines[what] = answer
    end
    assert.is_true(out:close())
  end)

  it("refuses a general table with an empty entry, naming it", function()
    assert.equal("backend cpu: general entry 'gather' is missing",
                 lines["general without gather"])
    assert.equal("backend cpu: general entry 'random' is missing",
                 lines["general without random"])
  end)

  it("refuses an area's table with an empty entry, naming it", function()
    assert.equal("backend cpu: knn entry 'refine' is missing", lines["knn without refine"])
    assert.equal("backend cpu: linalg entry 'gesvd' is missing", lines["linalg without gesvd"])
    assert.equal("backend cpu: conv entry 'forward' is missing", lines["conv without forward"])
    assert.equal("backend cpu: filter entry 'box' is missing", lines["filter without box"])
  end)

  it("takes complete tables", function()
    assert.equal("ok", lines["general complete"])
    assert.equal("ok", lines["knn complete"])
    assert.equal("ok", lines["linalg complete"])
    assert.equal("ok", lines["conv complete"])
    assert.equal("ok", lines["filter complete"])
  end)
end)
