/* Elementwise operations: the operators + - * / % // ^ and unary minus on
 * arrays, and the functions (also methods) add sub mul div idiv mod pow
 * minimum maximum eq ne lt le gt ge, neg abs sqrt exp log log1p expm1 sin
 * cos tanh sigmoid erf floor ceil round logical_not isnan isinf isfinite,
 * clamp, and ml.where. Lua numbers are weak scalars (see
 * core/elementwise.h); tables become arrays. */
#include "../core/copy.h"
#include "../core/elementwise.h"
#include "l_array.h"

/* Lua numbers and booleans are weak scalars. */
static int isscalar(lua_State *L, int idx) {
  int t = lua_type(L, idx);
  return t == LUA_TNUMBER || t == LUA_TBOOLEAN;
}

/* Pushes a op v, v being the argument at idx (array, table or number). */
static void apply(lua_State *L, ml_binop op, const ml_array *a, int idx) {
  if (isscalar(L, idx)) {
    ml_scalar s = l_checkscalar(L, idx);
    l_check(L, ml_binary_scalar(op, l_newarray(L), a, s, 0));
  } else {
    const ml_array *b = l_toarray(L, idx, a);
    l_check(L, ml_binary(op, l_newarray(L), a, b));
  }
}

static int binary(lua_State *L, ml_binop op) {
  if (isscalar(L, 1) && !isscalar(L, 2)) { /* number op array */
    ml_scalar s = l_checkscalar(L, 1);
    const ml_array *b = l_toarray(L, 2, NULL);
    l_check(L, ml_binary_scalar(op, l_newarray(L), b, s, 1));
  } else {
    apply(L, op, l_toarray(L, 1, NULL), 2);
  }
  return 1;
}

static int unary(lua_State *L, ml_unop op) {
  const ml_array *a = l_toarray(L, 1, NULL);
  l_check(L, ml_unary(op, l_newarray(L), a));
  return 1;
}

static int op_add(lua_State *L) { return binary(L, ML_ADD); }
static int op_sub(lua_State *L) { return binary(L, ML_SUB); }
static int op_mul(lua_State *L) { return binary(L, ML_MUL); }
static int op_div(lua_State *L) { return binary(L, ML_DIV); }
static int op_pow(lua_State *L) { return binary(L, ML_POW); }
static int op_idiv(lua_State *L) { return binary(L, ML_IDIV); }
static int op_mod(lua_State *L) { return binary(L, ML_MOD); }
static int op_minimum(lua_State *L) { return binary(L, ML_MINIMUM); }
static int op_maximum(lua_State *L) { return binary(L, ML_MAXIMUM); }
static int op_eq(lua_State *L) { return binary(L, ML_EQ); }
static int op_ne(lua_State *L) { return binary(L, ML_NE); }
static int op_lt(lua_State *L) { return binary(L, ML_LT); }
static int op_le(lua_State *L) { return binary(L, ML_LE); }
static int op_gt(lua_State *L) { return binary(L, ML_GT); }
static int op_ge(lua_State *L) { return binary(L, ML_GE); }

static int op_neg(lua_State *L) { return unary(L, ML_NEG); }
static int op_abs(lua_State *L) { return unary(L, ML_ABS); }
static int op_sqrt(lua_State *L) { return unary(L, ML_SQRT); }
static int op_exp(lua_State *L) { return unary(L, ML_EXP); }
static int op_log(lua_State *L) { return unary(L, ML_LOG); }
static int op_log1p(lua_State *L) { return unary(L, ML_LOG1P); }
static int op_expm1(lua_State *L) { return unary(L, ML_EXPM1); }
static int op_sin(lua_State *L) { return unary(L, ML_SIN); }
static int op_cos(lua_State *L) { return unary(L, ML_COS); }
static int op_tanh(lua_State *L) { return unary(L, ML_TANH); }
static int op_sigmoid(lua_State *L) { return unary(L, ML_SIGMOID); }
static int op_erf(lua_State *L) { return unary(L, ML_ERF); }
static int op_floor(lua_State *L) { return unary(L, ML_FLOOR); }
static int op_ceil(lua_State *L) { return unary(L, ML_CEIL); }
static int op_round(lua_State *L) { return unary(L, ML_ROUND); }
static int op_logical_not(lua_State *L) { return unary(L, ML_NOT); }
static int op_isnan(lua_State *L) { return unary(L, ML_ISNAN); }
static int op_isinf(lua_State *L) { return unary(L, ML_ISINF); }
static int op_isfinite(lua_State *L) { return unary(L, ML_ISFINITE); }

/* clamp(x, lo, hi): lo or hi may be nil. Number bounds go through
 * ml_clamp (saturating); array bounds through maximum and minimum. */
static int op_clamp(lua_State *L) {
  const ml_array *x = l_toarray(L, 1, NULL);
  int has_lo = !lua_isnoneornil(L, 2), has_hi = !lua_isnoneornil(L, 3);
  if (!has_lo && !has_hi)
    return luaL_error(L, "clamp: needs a lower or an upper bound");
  if ((!has_lo || isscalar(L, 2)) && (!has_hi || isscalar(L, 3))) {
    ml_scalar lo = has_lo ? l_checkscalar(L, 2) : ml_scalar_int(0);
    ml_scalar hi = has_hi ? l_checkscalar(L, 3) : ml_scalar_int(0);
    l_check(L, ml_clamp(l_newarray(L), x, has_lo ? &lo : NULL,
                        has_hi ? &hi : NULL));
    return 1;
  }
  for (int idx = 2; idx <= 3; idx++) {
    if (lua_isnoneornil(L, idx)) continue;
    int rc;
    if (isscalar(L, idx)) {
      ml_scalar s = l_checkscalar(L, idx);
      rc = ml_clamp(l_newarray(L), x, idx == 2 ? &s : NULL,
                    idx == 3 ? &s : NULL);
    } else { /* maximum or minimum underneath: named clamp all the same */
      const ml_array *b = l_toarray(L, idx, x);
      rc = ml_binary(idx == 2 ? ML_MAXIMUM : ML_MINIMUM, l_newarray(L), x, b);
    }
    if (rc) l_raise_as(L, "clamp");
    x = l_checkarray(L, -1);
  }
  return 1;
}

/* Argument idx as an array for where; a number is weak against like. */
static const ml_array *where_operand(lua_State *L, int idx,
                                     const ml_array *like) {
  if (isscalar(L, idx)) {
    ml_scalar s = l_checkscalar(L, idx);
    if (!ml_scalar_fits(s, ml_dtype_with_scalar(like->dtype, s)))
      luaL_error(L, "where: %I is out of range for %s", (lua_Integer)s.i,
                 ml_dtype_name(like->dtype));
  }
  return l_toarray(L, idx, like);
}

/* where(cond, a, b): a and b arrays, tables or numbers. */
static int op_where(lua_State *L) {
  const ml_array *c = l_toarray(L, 1, NULL), *a, *b;
  if (isscalar(L, 2) && !isscalar(L, 3)) {
    b = l_toarray(L, 3, NULL);
    a = where_operand(L, 2, b);
  } else if (isscalar(L, 2)) {
    /* two numbers: the first as an array on the condition's device */
    ml_scalar s = l_checkscalar(L, 2);
    ml_array *t = l_newarray(L);
    l_check(L, ml_full(t, s.is_int ? ML_INT64 : ml_default_dtype(), 0, NULL,
                       ml_array_device(c), s));
    lua_replace(L, 2);
    a = t;
    b = where_operand(L, 3, a);
  } else {
    a = l_toarray(L, 2, NULL);
    b = where_operand(L, 3, a);
  }
  l_check(L, ml_where(l_newarray(L), c, a, b));
  return 1;
}

void l_open_elementwise(lua_State *L, int module, int methods) {
  static const luaL_Reg funcs[] = {
      {"add", op_add},         {"sub", op_sub},
      {"mul", op_mul},         {"div", op_div},
      {"pow", op_pow},         {"idiv", op_idiv},
      {"mod", op_mod},         {"minimum", op_minimum},
      {"maximum", op_maximum}, {"eq", op_eq},
      {"ne", op_ne},           {"lt", op_lt},
      {"le", op_le},           {"gt", op_gt},
      {"ge", op_ge},           {"neg", op_neg},
      {"abs", op_abs},         {"sqrt", op_sqrt},
      {"exp", op_exp},         {"log", op_log},
      {"log1p", op_log1p},     {"expm1", op_expm1},
      {"sin", op_sin},         {"cos", op_cos},
      {"tanh", op_tanh},       {"sigmoid", op_sigmoid},
      {"floor", op_floor},     {"ceil", op_ceil},
      {"round", op_round},     {"logical_not", op_logical_not},
      {"isnan", op_isnan},     {"isinf", op_isinf},
      {"isfinite", op_isfinite}, {"clamp", op_clamp},
      {"erf", op_erf},
      {NULL, NULL}};
  static const luaL_Reg module_only[] = {{"where", op_where}, {NULL, NULL}};
  static const luaL_Reg meta[] = {
      {"__add", op_add}, {"__sub", op_sub},   {"__mul", op_mul},
      {"__div", op_div}, {"__pow", op_pow},   {"__unm", op_neg},
      {"__mod", op_mod}, {"__idiv", op_idiv}, {NULL, NULL}};
  l_setfuncs(L, module, funcs);
  l_setfuncs(L, methods, funcs);
  l_setfuncs(L, module, module_only);
  luaL_getmetatable(L, ML_ARRAY_MT);
  l_setfuncs(L, -1, meta);
  lua_pop(L, 1);
}
