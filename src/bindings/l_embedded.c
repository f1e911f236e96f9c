/* ml_open_embedded: the embedded Lua modules opened through moonlab.so's
 * luaopen_moonlab_<name> symbols (see moonlab.h). */
#include <lauxlib.h>

#include "moonlab.h"

int ml_open_embedded(lua_State *L, const char *name) {
  luaL_requiref(L, "moonlab", luaopen_moonlab, 0);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_getfield(L, -1, name);
  lua_pushstring(L, name);
  lua_call(L, 1, 1);
  return 1;
}
