/* PLACEHOLDER: replaced by the area owner. */
#include "l_array.h"

int l_subscript_get(lua_State *L) { return luaL_error(L, "subscript: not implemented"); }
int l_subscript_set(lua_State *L) { return luaL_error(L, "subscript: not implemented"); }
