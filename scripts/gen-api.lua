-- Writes the API reference, docs/api.md, from the help entries
-- (src/lua/moonlab/help/*.lua): bin/moonlab scripts/gen-api.lua OUT, as
-- `make docs` does. tests/help_spec.lua checks that the committed file
-- is current.
local out = assert(arg[1], "usage: moonlab scripts/gen-api.lua OUT.md")
local f = assert(io.open(out, "w"))
f:write(require("moonlab.help").markdown())
assert(f:close())
