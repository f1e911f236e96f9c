/* Matrix products: mm mv dot outer matmul (module functions and methods).
 * dot returns a Lua number; the others return new arrays. */
#include "../core/copy.h"
#include "../core/matmul.h"
#include "l_array.h"

typedef int (*product_fn)(ml_array *out, const ml_array *a, const ml_array *b);

/* Pushes fn(a, b) for the arrays (or numbers, or tables) at 1 and 2. */
static int product(lua_State *L, product_fn fn) {
  ml_array *a = l_toarray(L, 1, NULL);
  ml_array *b = l_toarray(L, 2, a);
  ml_array *r = l_newarray(L);
  l_check(L, fn(r, a, b));
  return 1;
}

static int matmul(ml_array *out, const ml_array *a, const ml_array *b) {
  return ml_matmul("matmul", out, a, b);
}

static int l_matmul(lua_State *L) { return product(L, matmul); }
static int l_mm(lua_State *L) { return product(L, ml_mm); }
static int l_mv(lua_State *L) { return product(L, ml_mv); }
static int l_outer(lua_State *L) { return product(L, ml_outer); }

static int l_dot(lua_State *L) {
  product(L, ml_dot);
  ml_scalar s;
  l_check(L, ml_read_element(l_checkarray(L, -1), 0, &s));
  l_pushscalar(L, s);
  return 1;
}

void l_open_matmul(lua_State *L, int module, int methods) {
  static const luaL_Reg fns[] = {{"matmul", l_matmul}, {"mm", l_mm},
                                 {"mv", l_mv},         {"dot", l_dot},
                                 {"outer", l_outer},   {NULL, NULL}};
  l_setfuncs(L, module, fns);
  l_setfuncs(L, methods, fns);
}
