/* The moonlab Lua module: `require "moonlab"`. */
#ifndef ML_MOONLAB_H
#define ML_MOONLAB_H

#include <lua.h>

#define MOONLAB_VERSION "0.1.0"

int luaopen_moonlab(lua_State *L);

/* The Lua half of the library, embedded at build time (build/embedded.c):
 * module name ("moonlab.datasets"), source text and its length. */
typedef struct {
  const char *name;
  const char *source;
  size_t length;
} ml_embedded_module;
extern const ml_embedded_module ml_embedded_modules[];

#endif
