/* PLACEHOLDER: replaced by the shell's owner. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>

#include "bindings/moonlab.h"

int main(int argc, char **argv) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "moonlab", luaopen_moonlab, 0);
  lua_setglobal(L, "ml");
  int rc = argc > 1 ? luaL_dofile(L, argv[1]) : 0;
  if (rc) fprintf(stderr, "%s\n", lua_tostring(L, -1));
  lua_close(L);
  return rc != 0;
}
