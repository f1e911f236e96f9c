/* Files: load_idx load_npy save_npy load_csv save_csv. Loaders return an
 * array on the default device (or options.device); savers accept an array
 * on any device. */
#include <string.h>

#include "../core/copy.h"
#include "../core/io.h"
#include "l_array.h"

typedef int (*loader)(ml_array *out, const char *path);

/* Runs the core loader into a CPU array, then moves it to the device. */
static int load_to_device(lua_State *L, ml_array *host, ml_device dev) {
  if (ml_device_equal(dev, ml_cpu())) return 1;
  ml_array *r = l_newarray(L);
  l_check(L, ml_to_device(r, host, dev));
  return 1;
}

static int load_with(lua_State *L, loader fn) {
  const char *path = luaL_checkstring(L, 1);
  int opts = lua_istable(L, 2) ? 2 : 0;
  ml_device dev = l_optdevice(L, opts, ml_default_device());
  ml_array *host = l_newarray(L);
  l_check(L, fn(host, path));
  return load_to_device(L, host, dev);
}

/* load_idx(path [, {device=}]) */
static int l_load_idx(lua_State *L) {
  l_checkoptions(L, lua_istable(L, 2) ? 2 : 0, "load_idx");
  return load_with(L, ml_load_idx);
}

/* load_npy(path [, {device=}]) */
static int l_load_npy(lua_State *L) {
  l_checkoptions(L, lua_istable(L, 2) ? 2 : 0, "load_npy");
  return load_with(L, ml_load_npy);
}

/* save_npy(path, x) */
static int l_save_npy(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  l_check(L, ml_save_npy(path, l_checkarray(L, 2)));
  return 0;
}

static char opt_delimiter(lua_State *L, int opts, const char *op) {
  char d = ',';
  if (opts && lua_getfield(L, opts, "delimiter") != LUA_TNIL) {
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    if (!s || len != 1 || s[0] == '\n' || s[0] == '\r')
      luaL_error(L, "%s: delimiter must be one character (not a line end)",
                 op);
    d = s[0];
  }
  if (opts) lua_pop(L, 1);
  return d;
}

/* load_csv(path [, {delimiter=",", skip=0, dtype=, device=}]) */
static int l_load_csv(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int opts = lua_istable(L, 2) ? 2 : 0;
  l_checkoptions(L, opts, "load_csv");
  ml_csv_options o;
  o.delimiter = opt_delimiter(L, opts, "load_csv");
  o.skip = l_optinteger(L, opts, "skip", 0);
  if (o.skip < 0)
    return luaL_error(L, "load_csv: skip must be non-negative (got %I)",
                      (LUAI_UACINT)o.skip);
  o.dtype = l_optdtype(L, opts, ml_default_dtype());
  ml_device dev = l_optdevice(L, opts, ml_default_device());
  ml_array *host = l_newarray(L);
  l_check(L, ml_load_csv(host, path, &o));
  return load_to_device(L, host, dev);
}

/* save_csv(path, x [, {delimiter=","}]) */
static int l_save_csv(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  ml_array *a = l_checkarray(L, 2);
  int opts = lua_istable(L, 3) ? 3 : 0;
  l_checkoptions(L, opts, "save_csv");
  char d = opt_delimiter(L, opts, "save_csv");
  l_check(L, ml_save_csv(path, a, d));
  return 0;
}

void l_open_io(lua_State *L, int module, int methods) {
  (void)methods;
  static const luaL_Reg funcs[] = {
      {"load_idx", l_load_idx}, {"load_npy", l_load_npy},
      {"save_npy", l_save_npy}, {"load_csv", l_load_csv},
      {"save_csv", l_save_csv}, {NULL, NULL}};
  l_setfuncs(L, module, funcs);
}
