/* ml.dist, the C half: the process group and the collectives on arrays
 * (core/dist.h). The collectives that change an array (all_reduce,
 * broadcast, recv into an array) work in place and return it, as
 * torch.distributed's do; all_gather, reduce_scatter and recv(peer) return
 * new arrays. all_reduce and broadcast also take a Lua number and return
 * one. Ranks are 0-based, as MPI's. The Lua half (moonlab/dist.lua) adds
 * the sharded algorithms. */
#include "../core/copy.h"
#include "../core/dist.h"
#include "l_array.h"

static int l_init(lua_State *L) {
  l_check(L, ml_dist_init());
  ml_device d = ml_default_device();
  if (d.kind != ML_CPU) l_check(L, ml_dist_device_init(d));
  lua_pushinteger(L, ml_dist_rank());
  lua_pushinteger(L, ml_dist_size());
  return 2;
}

static int l_rank(lua_State *L) {
  lua_pushinteger(L, ml_dist_rank());
  return 1;
}

static int l_size(lua_State *L) {
  lua_pushinteger(L, ml_dist_size());
  return 1;
}

static int l_local_rank(lua_State *L) {
  lua_pushinteger(L, ml_dist_local_rank());
  return 1;
}

static int l_barrier(lua_State *L) {
  l_check(L, ml_dist_barrier());
  return 0;
}

/* The options table at 2, if any, checked against fname's entry. */
static int options(lua_State *L, const char *fname) {
  int opts = lua_gettop(L) >= 2 && !lua_isnil(L, 2) ? 2 : 0;
  if (opts) luaL_checktype(L, 2, LUA_TTABLE);
  l_checkoptions(L, opts, fname);
  return opts;
}

static ml_dist_op check_op(lua_State *L, int opts, const char *fname) {
  ml_dist_op op = ML_DIST_SUM;
  if (opts && lua_getfield(L, opts, "op") != LUA_TNIL) {
    const char *name = lua_tostring(L, -1);
    if (!ml_dist_op_parse(name, &op))
      luaL_error(L, "%s: op must be \"sum\", \"max\", \"min\" or \"prod\" "
                 "(got \"%s\")", fname, name);
  }
  if (opts) lua_pop(L, 1);
  return op;
}

/* A Lua number at 1 becomes a 0-d CPU array (int64 or float64) in its
 * place; returns whether it was one. */
static int number_in(lua_State *L) {
  if (!lua_isnumber(L, 1) || l_testarray(L, 1)) return 0;
  ml_scalar s = l_checkscalar(L, 1);
  ml_array *a = l_newarray(L);
  l_check(L, ml_full(a, lua_isinteger(L, 1) ? ML_INT64 : ML_FLOAT64, 0, NULL,
                     ml_cpu(), s));
  lua_replace(L, 1);
  return 1;
}

/* Returns the array at 1, or its value when it stood for a number. */
static int result(lua_State *L, int number) {
  if (!number) {
    lua_settop(L, 1);
    return 1;
  }
  ml_scalar s;
  ml_array *a = l_checkarray(L, 1);
  l_check(L, ml_read_element(a, 0, &s));
  l_pushscalar(L, s);
  return 1;
}

static int l_all_reduce(lua_State *L) {
  int opts = options(L, "dist.all_reduce");
  ml_dist_op op = check_op(L, opts, "all_reduce");
  int number = number_in(L);
  l_check(L, ml_dist_all_reduce(l_checkarray(L, 1), op));
  return result(L, number);
}

static int l_broadcast(lua_State *L) {
  int opts = options(L, "dist.broadcast");
  lua_Integer root = l_optinteger(L, opts, "root", 0);
  int number = number_in(L);
  l_check(L, ml_dist_broadcast(l_checkarray(L, 1), (int)root));
  return result(L, number);
}

static int l_all_gather(lua_State *L) {
  ml_array *x = l_checkarray(L, 1);
  ml_array *out = l_newarray(L);
  l_check(L, ml_dist_all_gather(out, x));
  return 1;
}

static int l_reduce_scatter(lua_State *L) {
  int opts = options(L, "dist.reduce_scatter");
  ml_dist_op op = check_op(L, opts, "reduce_scatter");
  ml_array *x = l_checkarray(L, 1);
  ml_array *out = l_newarray(L);
  l_check(L, ml_dist_reduce_scatter(out, x, op));
  return 1;
}

static int l_send(lua_State *L) {
  ml_array *x = l_checkarray(L, 1);
  l_check(L, ml_dist_send(x, (int)luaL_checkinteger(L, 2)));
  return 0;
}

/* recv(x, peer) into x; recv(peer [, {device=}]) into a new array. */
static int l_recv(lua_State *L) {
  ml_array *x = l_testarray(L, 1);
  if (x) {
    l_check(L, ml_dist_recv(x, (int)luaL_checkinteger(L, 2), ml_cpu()));
    lua_settop(L, 1);
    return 1;
  }
  int peer = (int)luaL_checkinteger(L, 1);
  int opts = options(L, "dist.recv");
  ml_device d = l_optdevice(L, opts, ml_default_device());
  ml_array *out = l_newarray(L);
  l_check(L, ml_dist_recv(out, peer, d));
  return 1;
}

void l_open_dist(lua_State *L, int module, int methods) {
  (void)methods;
  static const luaL_Reg funcs[] = {{"init", l_init},
                                   {"rank", l_rank},
                                   {"size", l_size},
                                   {"local_rank", l_local_rank},
                                   {"barrier", l_barrier},
                                   {"all_reduce", l_all_reduce},
                                   {"broadcast", l_broadcast},
                                   {"all_gather", l_all_gather},
                                   {"reduce_scatter", l_reduce_scatter},
                                   {"send", l_send},
                                   {"recv", l_recv},
                                   {NULL, NULL}};
  lua_newtable(L);
  l_setfuncs(L, -1, funcs);
  lua_setfield(L, module, "dist");
}
