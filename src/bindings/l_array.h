/* Shared helpers of the Lua bindings: the array userdata, argument parsing
 * and raising core errors.
 *
 * Every binding area (one file each) exports l_open_<area>(L, module,
 * methods): it adds its functions to the module table and, where they take
 * an array first, to the methods table, so that x:sum(2) == ml.sum(x, 2).
 * Dimensions arrive 1-based from Lua (negative counts from the end) and are
 * turned 0-based here before reaching the core. */
#ifndef ML_L_ARRAY_H
#define ML_L_ARRAY_H

#include <lauxlib.h>
#include <lua.h>

#include "../core/array.h"
#include "../core/status.h"

#define ML_ARRAY_MT "moonlab.array"

/* The array at idx; raises if it is not one or was freed. */
ml_array *l_checkarray(lua_State *L, int idx);
/* The array at idx, or NULL if idx holds something else. */
ml_array *l_testarray(lua_State *L, int idx);
/* Pushes a new, empty array userdata and returns its struct, which a core
 * function then fills. Created before the core call, so that a raise never
 * leaks the result. */
ml_array *l_newarray(lua_State *L);
/* The name the running C function was called by ("zeros", "astype"), for
 * messages. */
const char *l_opname(lua_State *L);
/* Raises the core's last error message as a Lua error, prefixed with
 * l_opname when it does not name its operation itself. */
int l_raise(lua_State *L, int status);
/* Raises the core's last error as op's, for a binding that runs another
 * operation underneath (x[idx] is index_select): the operation the message
 * names, if any, becomes op. */
int l_raise_as(lua_State *L, const char *op);
#define l_check(L, call)          \
  do {                            \
    int l_rc_ = (call);           \
    if (l_rc_) l_raise((L), l_rc_); \
  } while (0)

/* Argument idx as an array: an array is returned as is; a number becomes a
 * 0-d array (dtype of `like` when given: the weak-scalar rule, else the
 * default for the number); a nested table becomes an array. The stack slot
 * is replaced by the array so that it stays referenced. */
ml_array *l_toarray(lua_State *L, int idx, const ml_array *like);
/* Argument idx as the values to store into dst (x:copy(v), x[k] = v,
 * scatter's src): an array as is; a number, or a table of numbers, as an
 * array of dst's dtype on its device, each number checked to be storable
 * in that dtype (NumPy 2's rule: u8[1] = 300.5 is an error). The stack
 * slot is replaced as by l_toarray. */
ml_array *l_tosource(lua_State *L, int idx, const ml_array *dst);
/* bindings/l_construct.c: fills out from the nested table at idx (the
 * array() constructor). dtype: ML_NDTYPES to infer (int64 if every number
 * is a Lua integer, else the default float dtype). */
void l_array_from_table(lua_State *L, int idx, int dtype, ml_device device,
                        ml_array *out);
ml_scalar l_checkscalar(lua_State *L, int idx);
/* Pushes a Lua number for s: an integer for integer dtypes. */
void l_pushscalar(lua_State *L, ml_scalar s);

/* Whether idx holds an options table (a table with no [1]). */
int l_isoptions(lua_State *L, int idx);
/* bindings/l_options.c: raises when the options at idx (0 or nil: none,
 * at no cost) have a key that the help entry of fname ("zeros",
 * "cuda.memory") does not document, or a value of the wrong type:
 * "zeros: unknown option 'dtyp' (did you mean 'dtype'?)". Call it before
 * allocating anything. */
void l_checkoptions(lua_State *L, int idx, const char *fname);
/* Fields of the options table at opts (0 or a non-table: none). */
ml_dtype l_optdtype(lua_State *L, int opts, ml_dtype dflt);
ml_device l_optdevice(lua_State *L, int opts, ml_device dflt);
int l_optbool(lua_State *L, int opts, const char *name, int dflt);
lua_Integer l_optinteger(lua_State *L, int opts, const char *name,
                         lua_Integer dflt);
/* Parses a dtype or device name at idx (raises on an unknown one). */
ml_dtype l_checkdtype(lua_State *L, int idx);
ml_device l_checkdevice(lua_State *L, int idx);

/* A shape given as integers from stack index first to last, or as a
 * single table of integers at first. Returns ndim. */
int l_checkshape(lua_State *L, int first, int last, int64_t *shape,
                 const char *op);
/* Index of the last argument that is not a trailing options table. */
int l_lastpositional(lua_State *L);
/* A 1-based (or negative) dimension at idx for an array of ndim
 * dimensions, as a 0-based one; ndim_ext as in ml_norm_dim. */
int l_checkdim(lua_State *L, int idx, int ndim_ext, const char *op);
void l_pushshape(lua_State *L, const ml_array *a);

/* Registers fns in the table at idx. */
void l_setfuncs(lua_State *L, int idx, const luaL_Reg *fns);

/* The areas, each in its own file. */
void l_open_array(lua_State *L, int module, int methods);
void l_open_construct(lua_State *L, int module, int methods);
void l_open_elementwise(lua_State *L, int module, int methods);
void l_open_reduce(lua_State *L, int module, int methods);
void l_open_matmul(lua_State *L, int module, int methods);
void l_open_linalg(lua_State *L, int module, int methods);
void l_open_shape(lua_State *L, int module, int methods);
void l_open_index(lua_State *L, int module, int methods);
void l_open_random(lua_State *L, int module, int methods);
void l_open_io(lua_State *L, int module, int methods);
void l_open_cuda(lua_State *L, int module, int methods);
void l_open_knn(lua_State *L, int module, int methods);
void l_open_conv(lua_State *L, int module, int methods);
void l_open_filter(lua_State *L, int module, int methods);
void l_open_binary(lua_State *L);
void l_open_dist(lua_State *L, int module, int methods);

/* bindings/l_format.c: tostring(x), the arrays' __tostring, and
 * ml.set_printoptions and ml.get_printoptions, which l_open_array adds to
 * the module. */
int l_array_tostring(lua_State *L);
void l_open_format(lua_State *L, int module);

/* bindings/l_subscript.c: x[key] and x[key] = v for keys that are not
 * method names (numbers, index tables, mask or index arrays). */
int l_subscript_get(lua_State *L);
int l_subscript_set(lua_State *L);

#endif
