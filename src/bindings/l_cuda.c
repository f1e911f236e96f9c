/* ml.cuda: the CUDA devices, their caching allocators and their streams.
 *
 * The same in every build: without CUDA (make CUDA=no, or no nvcc) and on
 * a machine without a GPU there are no devices, available() is false and
 * the functions that name a device raise the core's "device cuda:0 ..."
 * error. A device is given as in "cuda:N": a number N (0-based, as in the
 * device's name) or the name itself; by default the default device when
 * it is a GPU, else cuda:0. */
#include "../core/backend.h"
#include "l_array.h"

/* The CUDA device at idx (checked to exist). */
static ml_device check_cuda(lua_State *L, int idx) {
  ml_device d = ml_default_device();
  if (d.kind != ML_CUDA) d.index = 0;
  d.kind = ML_CUDA;
  if (lua_type(L, idx) == LUA_TSTRING) {
    d = l_checkdevice(L, idx);
    if (d.kind != ML_CUDA) luaL_argerror(L, idx, "not a cuda device");
  } else if (!lua_isnoneornil(L, idx)) {
    lua_Integer i = luaL_checkinteger(L, idx);
    d.index = i < 0 || i > 1024 ? -1 : (int)i;
  }
  const ml_backend *be;
  l_check(L, ml_backend_get(d, &be));
  return d;
}

static int available(lua_State *L) {
  lua_pushboolean(L, ml_device_count(ML_CUDA) > 0);
  return 1;
}

static int device_count(lua_State *L) {
  lua_pushinteger(L, ml_device_count(ML_CUDA));
  return 1;
}

static int synchronize(lua_State *L) {
  ml_device d = check_cuda(L, 1);
  const ml_backend *be;
  l_check(L, ml_backend_get(d, &be));
  l_check(L, be->synchronize(d.index));
  return 0;
}

static int device_name(lua_State *L) {
  char name[256];
  l_check(L, ml_device_product_name(check_cuda(L, 1), name, sizeof name));
  lua_pushstring(L, name);
  return 1;
}

/* {allocated, cached, peak, total} in bytes: held by arrays (rounded to
 * the allocator's size classes), kept for reuse, the most ever allocated,
 * and the device's memory. */
static int memory(lua_State *L) {
  ml_device_memory s;
  l_check(L, ml_device_memory_of(check_cuda(L, 1), &s));
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, (lua_Integer)s.allocated);
  lua_setfield(L, -2, "allocated");
  lua_pushinteger(L, (lua_Integer)s.cached);
  lua_setfield(L, -2, "cached");
  lua_pushinteger(L, (lua_Integer)s.peak);
  lua_setfield(L, -2, "peak");
  lua_pushinteger(L, (lua_Integer)s.total);
  lua_setfield(L, -2, "total");
  return 1;
}

static int empty_cache(lua_State *L) {
  l_check(L, ml_device_empty_cache(check_cuda(L, 1)));
  return 0;
}

void l_open_cuda(lua_State *L, int module, int methods) {
  (void)methods;
  static const luaL_Reg funcs[] = {{"available", available},
                                   {"device_count", device_count},
                                   {"device_name", device_name},
                                   {"synchronize", synchronize},
                                   {"memory", memory},
                                   {"empty_cache", empty_cache},
                                   {NULL, NULL}};
  lua_newtable(L);
  l_setfuncs(L, -1, funcs);
  lua_setfield(L, module, "cuda");
}
