-- The shell survives bad input of every kind (DESIGN.md, "Errors"): it
-- keeps its state through errors and never dies on them.
local ml = require "moonlab"

describe("the shell survives bad input", function()
  local bin = os.getenv("MOONLAB_BIN") or "bin/moonlab"

  local function run_repl(lines)
    local inp, out, err = os.tmpname(), os.tmpname(), os.tmpname()
    local f = assert(io.open(inp, "w"))
    f:write(table.concat(lines, "\n"), "\n")
    f:close()
    local ok, _, code = os.execute(string.format("%s -i <%s >%s 2>%s", bin, inp, out, err))
    local function slurp(p)
      local h = assert(io.open(p))
      local s = h:read("a")
      h:close()
      os.remove(p)
      return s
    end
    os.remove(inp)
    return slurp(out), slurp(err), ok, code
  end

  it("keeps its state through errors of every kind and prints a final value", function()
    local out, err, ok, code = run_repl({
      "x = ml.arange(12):reshape(3, 4)",
      "x + ml.zeros(4, 3)",
      "x:astype('complex')",
      "x[{10, 1}]",
      "x[{1, 1, 1}]",
      "x:mm(x)",
      "x:index_select(1, {0})",
      "x:topk(9)",
      "ml.empty(2^62)",
      "ml.zeros(1 << 40, 1 << 40)",
      "ml.ones(1, 1):expand(2^40, 2^40)",
      "ml.randint(0, 1000, 3, {dtype = 'uint8'})",
      "ml.load_npy('/nonexistent/x.npy')",
      "ml.array({{1}, {1, 2}})",
      "y = ml.ones(2); y:free()",
      "y + 1",
      "y:sum()",
      "y",
      "ml.zeros(2, {dtype = 'int32'}) + (1 << 40)",
      "error({})",
      "nil + 1",
      "for i = 1, 3 do local t = ml.rand(1000, 1000) end",
      "z = x:t()",
      "print('alive', x:sum(), z[{4, 3}], tostring(y))",
    })
    assert.is_true(ok)
    assert.equal(0, code)
    assert.truthy(out:find("alive\t66\t11\t[freed array]", 1, true), out)
    for _, msg in ipairs({
      "add: shapes 3x4 and 4x3 do not broadcast",
      "unknown dtype 'complex'",
      "index 10 is out of bounds for dimension 1 with size 3",
      "index: 3 indices for an array of 2 dimensions",
      "mm: shapes 3x4 and 3x4 are not aligned (4 != 3)",
      "index_select: index 0 is out of bounds for dimension 1 with size 3",
      "topk: k = 9 exceeds the 4 elements of dimension 2",
      "shape 4611686018427387904 is too large",
      "shape 1099511627776x1099511627776 is too large",
      "expand: shape 1099511627776x1099511627776 is too large",
      "randint: range [0, 1000) does not fit uint8",
      "load_npy: cannot open '/nonexistent/x.npy'",
      "array: ragged nested table",
      "array was freed",
      "add: 1099511627776 is out of range for int32",
      "(error object is a table value)",
      "attempt to perform arithmetic on a nil value",
    }) do
      assert.truthy(err:find(msg, 1, true), "missing: " .. msg .. "\n" .. err)
    end
    assert.falsy(err:find("Segmentation", 1, true))
  end)

  it("refuses a huge allocation without dying", function()
    local out, err, ok = run_repl({
      "ok, e = pcall(ml.empty, 2^62); print(ok, e)",
      "ok, e = pcall(ml.zeros, 2^28, 2^28); print(ok, e)",
      "print('still here', ml.ones(3):sum())",
    })
    assert.is_true(ok)
    assert.truthy(out:find("false\tempty: shape 4611686018427387904 is too large", 1, true), out)
    assert.truthy(out:find("false\tzeros: out of memory allocating", 1, true), out)
    assert.truthy(out:find("still here\t3.0", 1, true), out)
    assert.equal("", err)
  end)
end)
