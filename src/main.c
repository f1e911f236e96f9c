/* moonlab, the shell: Lua 5.4 with the moonlab module preloaded as the
 * global `ml`. Its command line is lua's:
 *
 *   moonlab [options] [script [args]]
 *
 * -e stat, -l mod, -l g=mod, -i, -v, -E, -W, "--" and "-" mean what they
 * mean to lua 5.4; the global `arg` holds the script at 0, the interpreter
 * and options at negative indices and the script's arguments from 1, which
 * the main chunk also gets as `...`; LUA_INIT_5_4 or LUA_INIT runs first
 * (unless -E). Without a script, moonlab enters the interactive shell when
 * stdin is a terminal and runs stdin as a script otherwise. An uncaught
 * error prints its message and traceback on stderr and exits with
 * status 1; in an MPI job of several ranks (ml.dist) the message names
 * the rank, and the failing rank ends the whole job (MPI_Abort), so that
 * no other rank waits for it forever. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bindings/moonlab.h"
#include "core/dist.h"
#include "repl.h"

#define PROGNAME "moonlab"
#define INIT_VAR "LUA_INIT"
#define INIT_VAR_VERSION INIT_VAR "_" LUA_VERSION_MAJOR "_" LUA_VERSION_MINOR

enum { HAS_ERROR = 1, HAS_I = 2, HAS_V = 4, HAS_EXEC = 8, HAS_NOENV = 16 };

/* "moonlab", or "moonlab (rank 2)" in an MPI job of several ranks. */
static const char *progname(void) {
  static char name[32];
  if (ml_dist_size() == 1) return PROGNAME;
  snprintf(name, sizeof name, PROGNAME " (rank %d)", ml_dist_rank());
  return name;
}

static void print_usage(const char *bad) {
  if (bad[1] == 'e' || bad[1] == 'l')
    fprintf(stderr, PROGNAME ": '%s' needs argument\n", bad);
  else
    fprintf(stderr, PROGNAME ": unrecognized option '%s'\n", bad);
  fputs("usage: " PROGNAME " [options] [script [args]]\n"
        "Available options are:\n"
        "  -e stat   execute string 'stat'\n"
        "  -i        enter interactive mode after executing 'script'\n"
        "  -l mod    require library 'mod' into global 'mod'\n"
        "  -l g=mod  require library 'mod' into global 'g'\n"
        "  -v        show version information\n"
        "  -E        ignore environment variables\n"
        "  -W        turn warnings on\n"
        "  --        stop handling options\n"
        "  -         stop handling options and execute stdin\n",
        stderr);
}

static void print_version(void) {
  printf(PROGNAME " " MOONLAB_VERSION "  " LUA_COPYRIGHT "\n");
  fflush(stdout);
}

/* Scans the options before the script. *script: the index of the script
 * in argv (0 when there is none), or of the bad option with HAS_ERROR. */
static int scan_options(char **argv, int *script) {
  int flags = 0;
  *script = 0;
  for (int i = 1; argv[i]; i++) {
    const char *a = argv[i];
    *script = i;
    if (a[0] != '-') return flags;
    switch (a[1]) {
      case '-':
        if (a[2]) return HAS_ERROR;
        *script = argv[i + 1] ? i + 1 : 0;
        return flags;
      case '\0':
        return flags;
      case 'E':
      case 'W':
      case 'i':
      case 'v':
        if (a[2]) return HAS_ERROR;
        if (a[1] == 'E') flags |= HAS_NOENV;
        if (a[1] == 'i') flags |= HAS_I | HAS_V;
        if (a[1] == 'v') flags |= HAS_V;
        break;
      case 'e':
      case 'l':
        if (a[1] == 'e') flags |= HAS_EXEC;
        if (a[2] == '\0') {
          if (argv[i + 1] == NULL || argv[i + 1][0] == '-') return HAS_ERROR;
          i++;
        }
        break;
      default:
        return HAS_ERROR;
    }
  }
  *script = 0;
  return flags;
}

/* arg[0] is the script (the interpreter when there is none), the words
 * before it go to negative indices, those after it to 1, 2, ... */
static void create_arg_table(lua_State *L, char **argv, int argc, int script) {
  lua_createtable(L, argc - script - 1 > 0 ? argc - script - 1 : 0,
                  script + 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

static int run_chunk(lua_State *L, int status) {
  if (status == LUA_OK) status = repl_call(L, 0, 0);
  return repl_report(L, progname(), status);
}

static int run_string(lua_State *L, const char *s, const char *name) {
  return run_chunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

static int run_file(lua_State *L, const char *name) {
  return run_chunk(L, luaL_loadfile(L, name));
}

/* -l mod, -l g=mod: g = require(mod); for a plain "mod-v2" the global is
 * the name before the '-' (lua's LUA_IGMARK). */
static int run_library(lua_State *L, const char *spec) {
  const char *eq = strchr(spec, '=');
  const char *mod = eq ? eq + 1 : spec;
  size_t glen = eq ? (size_t)(eq - spec) : strcspn(spec, "-");
  lua_getglobal(L, "require");
  lua_pushstring(L, mod);
  int status = repl_call(L, 1, 1);
  if (status == LUA_OK) {
    lua_pushlstring(L, spec, glen);
    lua_insert(L, -2);
    lua_setglobal(L, lua_tostring(L, -2));
    lua_pop(L, 1);
  }
  return repl_report(L, progname(), status);
}

static int run_init(lua_State *L) {
  const char *name = "=" INIT_VAR_VERSION;
  const char *init = getenv(name + 1);
  if (init == NULL) {
    name = "=" INIT_VAR;
    init = getenv(name + 1);
  }
  if (init == NULL) return LUA_OK;
  if (init[0] == '@') return run_file(L, init + 1);
  return run_string(L, init, name);
}

/* Runs -e and -l (and turns warnings on for -W) in command-line order,
 * over argv[1..n). Returns 0 when one failed. */
static int run_options(lua_State *L, char **argv, int n) {
  for (int i = 1; i < n; i++) {
    char option = argv[i][1];
    if (option == 'e' || option == 'l') {
      const char *extra = argv[i][2] ? argv[i] + 2 : argv[++i];
      int status = option == 'e' ? run_string(L, extra, "=(command line)")
                                 : run_library(L, extra);
      if (status != LUA_OK) return 0;
    } else if (option == 'W') {
      lua_warning(L, "@on", 0);
    }
  }
  return 1;
}

/* The main script, "-" for stdin (unless after "--"), with the positive
 * entries of arg as its arguments. */
static int run_script(lua_State *L, char **argv, int script) {
  const char *name = argv[script];
  if (strcmp(name, "-") == 0 && strcmp(argv[script - 1], "--") != 0)
    name = NULL;
  int status = luaL_loadfile(L, name);
  if (status == LUA_OK) {
    if (lua_getglobal(L, "arg") != LUA_TTABLE)
      return luaL_error(L, "'arg' is not a table");
    int n = (int)luaL_len(L, -1);
    luaL_checkstack(L, n + 3, "too many arguments to script");
    for (int i = 1; i <= n; i++) lua_rawgeti(L, -i, i);
    lua_remove(L, -n - 1);
    status = repl_call(L, n, 0);
  }
  return repl_report(L, progname(), status);
}

/* Everything runs in protected mode; returns true on success. */
static int pmain(lua_State *L) {
  int argc = (int)lua_tointeger(L, 1);
  char **argv = lua_touserdata(L, 2);
  int script;
  int flags = scan_options(argv, &script);
  luaL_checkversion(L);
  if (flags == HAS_ERROR) {
    print_usage(argv[script]);
    return 0;
  }
  if (flags & HAS_V) print_version();
  if (flags & HAS_NOENV) {
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
  }
  luaL_openlibs(L);
  luaL_requiref(L, "moonlab", luaopen_moonlab, 0);
  lua_setglobal(L, "ml");
  create_arg_table(L, argv, argc, script);
  lua_gc(L, LUA_GCRESTART);
  lua_gc(L, LUA_GCGEN, 0, 0);
  if (!(flags & HAS_NOENV) && run_init(L) != LUA_OK) return 0;
  if (!run_options(L, argv, script > 0 ? script : argc)) return 0;
  if (script > 0 && run_script(L, argv, script) != LUA_OK) return 0;
  if (flags & HAS_I) {
    repl_run(L);
  } else if (script == 0 && !(flags & (HAS_EXEC | HAS_V))) {
    if (isatty(STDIN_FILENO)) {
      print_version();
      repl_run(L);
    } else if (run_file(L, NULL) != LUA_OK) {
      return 0;
    }
  }
  lua_pushboolean(L, 1);
  return 1;
}

int main(int argc, char **argv) {
  lua_State *L = luaL_newstate();
  if (L == NULL) {
    fputs(PROGNAME ": cannot create state: not enough memory\n", stderr);
    return EXIT_FAILURE;
  }
  lua_gc(L, LUA_GCSTOP);
  lua_pushcfunction(L, pmain);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  int status = lua_pcall(L, 2, 1, 0);
  int ok = lua_toboolean(L, -1);
  repl_report(L, progname(), status);
  if (!ok || status != LUA_OK) ml_dist_abort(EXIT_FAILURE);
  lua_close(L);
  return ok && status == LUA_OK ? EXIT_SUCCESS : EXIT_FAILURE;
}
