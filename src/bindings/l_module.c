/* luaopen_moonlab: builds the module table from the binding areas, ties the
 * allocator to the Lua garbage collector, and registers the embedded Lua
 * modules with package.preload. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/backend.h"
#include "../core/dist.h"
#include "l_array.h"
#include "moonlab.h"

static lua_State *main_state;

/* The allocator's pressure hook: unreferenced arrays are only freed by
 * their __gc, and the collector cannot see how many bytes they hold. */
static void collect_garbage(void *ud) {
  (void)ud;
  if (main_state) lua_gc(main_state, LUA_GCCOLLECT);
}

static int load_embedded(lua_State *L) {
  const ml_embedded_module *m = lua_touserdata(L, lua_upvalueindex(1));
  char chunkname[96];
  snprintf(chunkname, sizeof chunkname, "@[moonlab]/%s.lua", m->name);
  if (luaL_loadbufferx(L, m->source, m->length, chunkname, "t") != LUA_OK)
    return lua_error(L);
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  return 1;
}

static void register_embedded(lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  for (const ml_embedded_module *m = ml_embedded_modules; m->name; m++) {
    lua_pushlightuserdata(L, (void *)m);
    lua_pushcclosure(L, load_embedded, 1);
    lua_setfield(L, -2, m->name);
  }
  lua_pop(L, 1);
}

static int set_default_dtype(lua_State *L) {
  ml_dtype t = l_checkdtype(L, 1);
  if (!ml_dtype_is_float(t))
    return luaL_error(L, "set_default_dtype: %s is not a float dtype", ml_dtype_name(t));
  ml_set_default_dtype(t);
  return 0;
}

static int get_default_dtype(lua_State *L) {
  lua_pushstring(L, ml_dtype_name(ml_default_dtype()));
  return 1;
}

static int set_device(lua_State *L) {
  ml_device d = l_checkdevice(L, 1);
  const ml_backend *be;
  l_check(L, ml_backend_get(d, &be));
  ml_set_default_device(d);
  return 0;
}

static int get_device(lua_State *L) {
  char buf[ML_DEVICE_NAME_MAX];
  lua_pushstring(L, ml_device_name(ml_default_device(), buf));
  return 1;
}

static ml_device optdevice(lua_State *L, int idx) {
  return lua_isnoneornil(L, idx) ? ml_default_device() : l_checkdevice(L, idx);
}

/* ml.memory([device]), default the default device: bytes held by live
 * arrays of the device's kind, their peak and how many arrays there are
 * (the core's count), and the bytes its allocator caches for reuse. */
static int memory(lua_State *L) {
  ml_device d = optdevice(L, 1);
  ml_device_memory dm;
  l_check(L, ml_device_memory_of(d, &dm));
  ml_memory_stats s = ml_memory((ml_device_kind)d.kind);
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, (lua_Integer)s.allocated);
  lua_setfield(L, -2, "allocated");
  lua_pushinteger(L, (lua_Integer)s.peak);
  lua_setfield(L, -2, "peak");
  lua_pushinteger(L, (lua_Integer)s.count);
  lua_setfield(L, -2, "arrays");
  lua_pushinteger(L, (lua_Integer)dm.cached);
  lua_setfield(L, -2, "cached");
  return 1;
}

/* ml.empty_cache([device]): gives the blocks the allocator caches back. */
static int empty_cache(lua_State *L) {
  l_check(L, ml_device_empty_cache(optdevice(L, 1)));
  return 0;
}

static int reset_peak(lua_State *L) {
  ml_memory_reset_peak((ml_device_kind)optdevice(L, 1).kind);
  return 0;
}

static int synchronize(lua_State *L) {
  ml_device d = optdevice(L, 1);
  const ml_backend *be;
  l_check(L, ml_backend_get(d, &be));
  l_check(L, be->synchronize(d.index));
  return 0;
}

/* ml.clock(): seconds on a monotonic wall clock, for timing (os.clock
 * counts CPU time of every thread). */
static int wall_clock(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
  return 1;
}

/* MOONLAB_DEVICE=cpu|cuda|cuda:N picks the default device, which must be
 * usable; without it the first GPU when there is one, else the CPU. */
static int choose_default_device(void) {
  const char *env = getenv("MOONLAB_DEVICE");
  ml_device d = ml_cpu();
  if (env && *env) {
    const ml_backend *be;
    if (!ml_device_parse(env, &d))
      return ml_fail(ML_EINVAL, "MOONLAB_DEVICE=%s: not a device (cpu, cuda or cuda:N)",
                     env);
    if (ml_backend_get(d, &be)) {
      char why[256];
      snprintf(why, sizeof why, "%s", ml_last_error());
      return ml_fail(ML_EDEVICE, "MOONLAB_DEVICE=%s: %s", env, why);
    }
  } else if (ml_device_count(ML_CUDA) > 0) {
    d.kind = ML_CUDA;
  }
  /* The ranks of an MPI job take a GPU each, by their rank on the machine,
   * where MOONLAB_DEVICE names no device number. */
  if (d.kind == ML_CUDA && !(env && strchr(env, ':')))
    d.index = ml_dist_local_rank() % ml_device_count(ML_CUDA);
  ml_set_default_device(d);
  return ML_OK;
}

int luaopen_moonlab(lua_State *L) {
  static int initialised;
  if (!initialised) {
    int rc = ml_backends_init();
    if (!rc) rc = ml_dist_init();
    if (!rc) rc = choose_default_device();
    if (rc) return luaL_error(L, "%s", ml_last_error());
    initialised = 1;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  main_state = lua_tothread(L, -1);
  lua_pop(L, 1);
  ml_set_pressure_hook(collect_garbage, NULL);
  register_embedded(L);

  lua_newtable(L); /* module */
  int module = lua_gettop(L);
  lua_newtable(L); /* methods */
  int methods = lua_gettop(L);
  luaL_newmetatable(L, ML_ARRAY_MT);
  lua_pop(L, 1);

  l_open_array(L, module, methods);
  l_open_construct(L, module, methods);
  l_open_elementwise(L, module, methods);
  l_open_reduce(L, module, methods);
  l_open_matmul(L, module, methods);
  l_open_linalg(L, module, methods);
  l_open_shape(L, module, methods);
  l_open_index(L, module, methods);
  l_open_random(L, module, methods);
  l_open_io(L, module, methods);
  l_open_cuda(L, module, methods);
  l_open_knn(L, module, methods);
  l_open_conv(L, module, methods);
  l_open_filter(L, module, methods);
  l_open_binary(L);
  l_open_dist(L, module, methods);

  static const luaL_Reg funcs[] = {
      {"set_default_dtype", set_default_dtype},
      {"get_default_dtype", get_default_dtype},
      {"set_device", set_device},
      {"device", get_device},
      {"memory", memory},
      {"empty_cache", empty_cache},
      {"reset_peak_memory", reset_peak},
      {"synchronize", synchronize},
      {"clock", wall_clock},
      {NULL, NULL}};
  l_setfuncs(L, module, funcs);
  lua_pushliteral(L, MOONLAB_VERSION);
  lua_setfield(L, module, "version");
  lua_pushvalue(L, methods);
  lua_setfield(L, module, "methods");
  lua_settop(L, module);

  /* The Lua half (moonlab/init.lua) completes the table. */
  lua_getglobal(L, "require");
  lua_pushliteral(L, "moonlab.init");
  lua_call(L, 1, 1);
  lua_pushvalue(L, module);
  lua_call(L, 1, 0);
  return 1;
}
