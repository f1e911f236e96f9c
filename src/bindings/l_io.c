/* Files: load_idx load_npy save_npy load savez load_csv save_csv. Loaders
 * return an array (or, for a .npz, a table of arrays) on the default
 * device (or options.device); savers accept arrays on any device. */
#include <stdlib.h>
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

/* An open .npz as a userdata whose __gc closes it, so that an error
 * raised while its members are read leaks nothing. */
#define NPZ_BOX "moonlab.npz"

static int npz_gc(lua_State *L) {
  ml_npz **z = luaL_checkudata(L, 1, NPZ_BOX);
  ml_npz_close(*z);
  *z = NULL;
  return 0;
}

static ml_npz **new_npz_box(lua_State *L) {
  ml_npz **z = lua_newuserdatauv(L, sizeof *z, 0);
  *z = NULL;
  if (luaL_newmetatable(L, NPZ_BOX)) {
    lua_pushcfunction(L, npz_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return z;
}

/* The members of the .npz at path as a table, name (without ".npy") to
 * array on dev. */
static int load_npz(lua_State *L, const char *path, ml_device dev) {
  ml_npz **z = new_npz_box(L);
  l_check(L, ml_npz_open("load", path, z));
  lua_newtable(L);
  int64_t n = ml_npz_count(*z);
  for (int64_t i = 0; i < n; i++) {
    const char *name = ml_npz_name(*z, i);
    size_t len = strlen(name);
    if (len > 4 && strcmp(name + len - 4, ".npy") == 0) len -= 4;
    lua_pushlstring(L, name, len);
    ml_array *host = l_newarray(L);
    l_check(L, ml_npz_read(*z, i, host));
    load_to_device(L, host, dev);
    if (!ml_device_equal(dev, ml_cpu())) lua_remove(L, -2);
    lua_settable(L, -3);
  }
  ml_npz_close(*z); /* now, not at collection */
  *z = NULL;
  return 1;
}

/* load(path [, {device=}]): a .npy as an array, a .npz as a table of
 * arrays, told apart by their first bytes. */
static int l_load(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int opts = lua_istable(L, 2) ? 2 : 0;
  l_checkoptions(L, opts, "load");
  ml_device dev = l_optdevice(L, opts, ml_default_device());
  ml_file_kind_t kind;
  l_check(L, ml_file_kind("load", path, &kind));
  if (kind == ML_FILE_NPZ) return load_npz(L, path, dev);
  ml_array *host = l_newarray(L);
  l_check(L, ml_load_npy(host, path));
  return load_to_device(L, host, dev);
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* savez(path, {name = array, ...} [, {compressed=false}]): members in the
 * order of their names. */
static int l_savez(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  int opts = lua_istable(L, 3) ? 3 : 0;
  l_checkoptions(L, opts, "savez");
  int compressed = l_optbool(L, opts, "compressed", 0);
  int64_t n = 0;
  for (lua_pushnil(L); lua_next(L, 2); lua_pop(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      return luaL_error(L, "savez: array names must be strings, not %s",
                        luaL_typename(L, -2));
    if (!l_testarray(L, -1))
      return luaL_error(L, "savez: '%s' is a %s, not an array",
                        lua_tostring(L, -2), luaL_typename(L, -1));
    n++;
  }
  /* names (and, after sorting, arrays) in userdata: freed by the GC */
  const char **names = lua_newuserdatauv(L, (size_t)(n ? n : 1) *
                                         sizeof *names, 0);
  const ml_array **arrays = lua_newuserdatauv(L, (size_t)(n ? n : 1) *
                                              sizeof *arrays, 0);
  int64_t k = 0;
  for (lua_pushnil(L); lua_next(L, 2); lua_pop(L, 1))
    names[k++] = lua_tostring(L, -2); /* anchored by the table's keys */
  qsort(names, (size_t)n, sizeof *names, cmp_names);
  for (int64_t i = 0; i < n; i++) {
    lua_getfield(L, 2, names[i]);
    arrays[i] = l_checkarray(L, -1); /* anchored by the table */
    lua_pop(L, 1);
  }
  l_check(L, ml_save_npz(path, n, names, arrays, compressed));
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
      {"save_npy", l_save_npy}, {"load", l_load},
      {"savez", l_savez},       {"load_csv", l_load_csv},
      {"save_csv", l_save_csv}, {NULL, NULL}};
  l_setfuncs(L, module, funcs);
}
