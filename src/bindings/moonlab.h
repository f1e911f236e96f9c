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

/* Requires "moonlab" (which registers the embedded modules in
 * package.preload), then loads the embedded module `name` and pushes its
 * value: the body of luaopen_moonlab_test and the other openers that
 * build/embedded.c defines, so that a stock lua5.4 finds
 * `require "moonlab.test"` in moonlab.so even before "moonlab" itself. */
int ml_open_embedded(lua_State *L, const char *name);

#endif
