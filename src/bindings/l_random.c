/* Random arrays from the global Philox4x32-10 generator (core/random.h):
 * seed get_rng_state set_rng_state rand randn uniform normal randint
 * randperm, and the raw bijection philox4x32. Shapes come as integers or a
 * table; a trailing table {dtype=, device=} picks the result's dtype and
 * device. */
#include "../core/backend.h"
#include "../core/philox.h"
#include "../core/random.h"
#include "l_array.h"

/* The shape from argument first to the last positional one, and the index
 * of the options table (0 when there is none). */
static int shape_args(lua_State *L, int first, int64_t *shape, int *opts,
                      const char *op) {
  int last = l_lastpositional(L);
  *opts = last < lua_gettop(L) ? lua_gettop(L) : 0;
  l_checkoptions(L, *opts, op);
  return l_checkshape(L, first, last, shape, op);
}

/* ml.seed(s): s any integer (taken as 64 bits); resets the offset. */
static int l_seed(lua_State *L) {
  ml_random_seed((uint64_t)luaL_checkinteger(L, 1));
  return 0;
}

/* ml.get_rng_state() -> {seed = s, offset = o}, both as 64-bit integers. */
static int l_get_rng_state(lua_State *L) {
  uint64_t seed, offset;
  ml_random_get_state(&seed, &offset);
  lua_createtable(L, 0, 2);
  lua_pushinteger(L, (lua_Integer)seed);
  lua_setfield(L, -2, "seed");
  lua_pushinteger(L, (lua_Integer)offset);
  lua_setfield(L, -2, "offset");
  return 1;
}

static uint64_t state_field(lua_State *L, const char *name) {
  int ok;
  lua_getfield(L, 1, name);
  lua_Integer v = lua_tointegerx(L, -1, &ok);
  if (!ok) luaL_error(L, "set_rng_state: field '%s' must be an integer", name);
  lua_pop(L, 1);
  return (uint64_t)v;
}

static int l_set_rng_state(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  uint64_t seed = state_field(L, "seed");
  ml_random_set_state(seed, state_field(L, "offset"));
  return 0;
}

static int float_dist(lua_State *L, const char *op, ml_randkind kind,
                      int first, double p1, double p2) {
  int64_t shape[ML_MAX_DIMS];
  int opts, ndim = shape_args(L, first, shape, &opts, op);
  ml_dtype t = l_optdtype(L, opts, ml_default_dtype());
  ml_device dev = l_optdevice(L, opts, ml_default_device());
  ml_array *r = l_newarray(L);
  if (kind == ML_RAND_UNIFORM)
    l_check(L, ml_rand_uniform(op, r, t, ndim, shape, dev, p1, p2));
  else
    l_check(L, ml_rand_normal(op, r, t, ndim, shape, dev, p1, p2));
  return 1;
}

/* rand(shape...): uniform in [0, 1). */
static int l_rand(lua_State *L) {
  return float_dist(L, "rand", ML_RAND_UNIFORM, 1, 0, 1);
}

/* randn(shape...): standard normal. */
static int l_randn(lua_State *L) {
  return float_dist(L, "randn", ML_RAND_NORMAL, 1, 0, 1);
}

/* uniform(low, high, shape...): uniform in [low, high). */
static int l_uniform(lua_State *L) {
  double low = luaL_checknumber(L, 1), high = luaL_checknumber(L, 2);
  return float_dist(L, "uniform", ML_RAND_UNIFORM, 3, low, high);
}

/* normal(mean, std, shape...). */
static int l_normal(lua_State *L) {
  double mean = luaL_checknumber(L, 1), std = luaL_checknumber(L, 2);
  return float_dist(L, "normal", ML_RAND_NORMAL, 3, mean, std);
}

/* randint(low, high, shape...): integers in [low, high), int64 unless a
 * dtype is named. */
static int l_randint(lua_State *L) {
  lua_Integer low = luaL_checkinteger(L, 1), high = luaL_checkinteger(L, 2);
  int64_t shape[ML_MAX_DIMS];
  int opts, ndim = shape_args(L, 3, shape, &opts, "randint");
  ml_dtype t = l_optdtype(L, opts, ML_INT64);
  ml_device dev = l_optdevice(L, opts, ml_default_device());
  ml_array *r = l_newarray(L);
  l_check(L, ml_randint(r, t, ndim, shape, dev, low, high));
  return 1;
}

/* randperm(n): a random permutation of 1..n, int64 unless a dtype is
 * named. */
static int l_randperm(lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  int opts = lua_gettop(L) >= 2 ? 2 : 0;
  l_checkoptions(L, opts, "randperm");
  ml_dtype t = l_optdtype(L, opts, ML_INT64);
  ml_device dev = l_optdevice(L, opts, ml_default_device());
  ml_array *r = l_newarray(L);
  l_check(L, ml_randperm(r, t, n, dev));
  return 1;
}

static uint32_t word_at(lua_State *L, int t, int i, const char *what) {
  int ok;
  lua_rawgeti(L, t, i);
  lua_Integer v = lua_tointegerx(L, -1, &ok);
  if (!ok || v < 0 || v > 0xffffffff)
    luaL_error(L, "philox4x32: %s word %d must be an integer in 0..2^32-1",
               what, i);
  lua_pop(L, 1);
  return (uint32_t)v;
}

/* philox4x32(counter, key): the raw Philox4x32-10 bijection on a table of
 * four 32-bit counter words and two key words; returns four words. The
 * stream of seed s draws block b from counter {b % 2^32, b // 2^32, 0, 0}
 * and key {s % 2^32, s // 2^32}. */
static int l_philox4x32(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  ml_philox4 ctr;
  for (int i = 0; i < 4; i++) ctr.w[i] = word_at(L, 1, i + 1, "counter");
  uint32_t k0 = word_at(L, 2, 1, "key"), k1 = word_at(L, 2, 2, "key");
  ml_philox_keys keys = ml_philox_schedule(k0, k1);
  ml_philox4 out = ml_philox4x32_10(ctr, &keys);
  lua_createtable(L, 4, 0);
  for (int i = 0; i < 4; i++) {
    lua_pushinteger(L, out.w[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

void l_open_random(lua_State *L, int module, int methods) {
  (void)methods;
  static const luaL_Reg funcs[] = {
      {"seed", l_seed},         {"get_rng_state", l_get_rng_state},
      {"set_rng_state", l_set_rng_state},
      {"rand", l_rand},         {"randn", l_randn},
      {"uniform", l_uniform},   {"normal", l_normal},
      {"randint", l_randint},   {"randperm", l_randperm},
      {"philox4x32", l_philox4x32},
      {NULL, NULL}};
  l_setfuncs(L, module, funcs);
}
