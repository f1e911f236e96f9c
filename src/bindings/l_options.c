/* l_checkoptions: a C binding's options table checked against the help
 * entry of its function, by the code that Lua modules call
 * (src/lua/moonlab/options.lua), so that C and Lua accept exactly the
 * options they document and word their errors alike. */
#include "l_array.h"

/* The registry holds options.check under this address once loaded. */
static const char checker_key = 0;

void l_checkoptions(lua_State *L, int idx, const char *fname) {
  if (idx == 0 || lua_isnoneornil(L, idx)) return;
  idx = lua_absindex(L, idx);
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &checker_key) != LUA_TFUNCTION) {
    lua_pop(L, 1);
    lua_getglobal(L, "require");
    lua_pushliteral(L, "moonlab.options");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "check");
    lua_remove(L, -2);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &checker_key);
  }
  lua_pushstring(L, fname);
  lua_pushvalue(L, idx);
  lua_call(L, 2, 0);
}
