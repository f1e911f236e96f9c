/* The shell's evaluation (tracebacks, Ctrl-C) and its read-eval-print
 * loop: prompts, incomplete chunks, printing of results, help, and with
 * libedit line editing, history and tab completion. What prints, what
 * completes and what help says come from the Lua module moonlab.shell. */
#include "repl.h"

#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#ifdef ML_HAVE_LIBEDIT
#include <editline/readline.h>
#include <histedit.h>
#endif

#include "core/status.h"

#define PROMPT "moonlab> "
#define PROMPT2 ">> "
#define CHUNKNAME "=stdin"
#define EOFMARK "<eof>"

/* ---- evaluation ---- */

static lua_State *running;                /* the state Ctrl-C stops */
static volatile sig_atomic_t call_interrupted; /* Ctrl-C during the call */

/* Without SA_RESTART: a Ctrl-C at the prompt ends the blocked read. */
static void set_sigint(void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
}

static void stop_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  luaL_error(L, "interrupted!");
}

/* Ctrl-C while Lua runs: a hook raises an error at the next instruction,
 * the core's loops see ml_interrupt_pending(); a second Ctrl-C, if the
 * first went unnoticed, terminates the process. */
static void on_sigint_running(int sig) {
  (void)sig;
  set_sigint(SIG_DFL);
  call_interrupted = 1;
  ml_interrupt_request();
  lua_sethook(running, stop_hook,
              LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT, 1);
}

/* Appends a traceback to the error message, without the last lines that
 * are the shell's own C frames (the one that started the call, the one
 * that prints results). */
static int message_handler(lua_State *L) {
  static const char shell_frame[] = "\n\t[C]: in ?";
  const size_t k = sizeof shell_frame - 1;
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
      return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)",
                          luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  size_t n;
  const char *tb = lua_tolstring(L, -1, &n);
  size_t end = n;
  while (end >= k && memcmp(tb + end - k, shell_frame, k) == 0) end -= k;
  if (end < n) lua_pushlstring(L, tb, end);
  return 1;
}

int repl_call(lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  struct sigaction old;
  lua_pushcfunction(L, message_handler);
  lua_insert(L, base);
  running = L;
  call_interrupted = 0;
  ml_interrupt_take();
  sigaction(SIGINT, NULL, &old);
  set_sigint(on_sigint_running);
  int status = lua_pcall(L, narg, nres, base);
  sigaction(SIGINT, &old, NULL);
  lua_sethook(L, NULL, 0, 0);
  ml_interrupt_take();
  lua_remove(L, base);
  return status;
}

int repl_report(lua_State *L, const char *progname, int status) {
  if (status == LUA_OK) return status;
  const char *msg = lua_tostring(L, -1);
  fflush(stdout);
  if (progname) fprintf(stderr, "%s: ", progname);
  fprintf(stderr, "%s\n", msg ? msg : "(error object is not a string)");
  fflush(stderr);
  lua_pop(L, 1);
  return status;
}

/* ---- the shell's Lua half ---- */

static const char shell_key = 0; /* registry: the moonlab.shell table */

static void open_shell(lua_State *L) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "moonlab.shell");
  lua_call(L, 1, 1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &shell_key);
}

/* Pushes the function name of moonlab.shell. */
static void push_shell(lua_State *L, const char *name) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &shell_key);
  lua_getfield(L, -1, name);
  lua_remove(L, -2);
}

/* ---- reading lines ---- */

static int terminal;                       /* stdin is a terminal */
static volatile sig_atomic_t interrupted;  /* Ctrl-C at the prompt */
static int at_eof;

static void on_sigint_prompt(int sig) {
  (void)sig;
  interrupted = 1;
}

#ifdef ML_HAVE_LIBEDIT

#define HISTORY_FILE ".moonlab_history"
#define HISTORY_MAX 1000

static char history_path[4096]; /* "": no history file */

static long count_lines(const char *path) {
  FILE *f = fopen(path, "r");
  long n = 0;
  int c;
  if (!f) return 0;
  while ((c = getc(f)) != EOF) n += c == '\n';
  fclose(f);
  return n;
}

/* The history file: $MOONLAB_HISTORY (empty: none), else
 * ~/.moonlab_history. Loads its last HISTORY_MAX entries; once the file
 * holds twice as many, replaces it with those. */
static void history_open(void) {
  const char *path = getenv("MOONLAB_HISTORY");
  const char *home = getenv("HOME");
  int n = 0;
  using_history();
  stifle_history(HISTORY_MAX);
  if (path)
    n = snprintf(history_path, sizeof history_path, "%s", path);
  else if (home && home[0])
    n = snprintf(history_path, sizeof history_path, "%s/" HISTORY_FILE, home);
  if (n <= 0 || n >= (int)sizeof history_path) {
    history_path[0] = '\0';
    return;
  }
  read_history(history_path);
  if (count_lines(history_path) > 2 * HISTORY_MAX) {
    char tmp[sizeof history_path + 32];
    snprintf(tmp, sizeof tmp, "%s.%ld", history_path, (long)getpid());
    if (write_history(tmp) != 0 || rename(tmp, history_path) != 0)
      remove(tmp);
  }
}

/* Appends one entry to the history file, in libedit's format, through a
 * history of one entry (libedit 3.1-20221030's append_history(1, f)
 * writes the last two entries). */
static void history_append(const char *chunk) {
  static History *one;
  HistEvent ev;
  if (!one && (one = history_init()) != NULL) history(one, &ev, H_SETSIZE, 1);
  FILE *f = one ? fopen(history_path, "a") : NULL;
  if (!f) return;
  history(one, &ev, H_ENTER, chunk);
  history(one, &ev, H_SAVE_FP, f);
  fclose(f);
}

/* Adds a chunk to the history, unless blank or a repeat of the last one,
 * and appends it to the history file at once: shells open side by side
 * each add their own lines, and a killed terminal loses none. */
static void history_add(const char *chunk) {
  static char *last;
  const char *p = chunk;
  while (isspace((unsigned char)*p)) p++;
  if (*p == '\0' || (last && strcmp(last, chunk) == 0)) return;
  add_history(chunk);
  if (history_path[0]) history_append(chunk);
  free(last);
  last = strdup(chunk);
}

#endif

typedef enum { LINE_OK, LINE_EOF, LINE_CANCEL } line_status;

/* A line from the terminal through libedit, else from stdin after the
 * prompt (if any); NULL at end of input or on an interrupted read. */
static char *get_line(const char *prompt) {
#ifdef ML_HAVE_LIBEDIT
  if (terminal) return readline(prompt);
#endif
  char *line = NULL;
  size_t cap = 0;
  if (prompt) {
    fputs(prompt, stdout);
    fflush(stdout);
  }
  ssize_t n = getline(&line, &cap, stdin);
  if (n < 0) {
    free(line);
    return NULL;
  }
  if (n > 0 && line[n - 1] == '\n') line[n - 1] = '\0';
  return line;
}

/* Reads one line, without its newline, into a malloc'd *line. */
static line_status read_line(lua_State *L, int first, char **line) {
  const char *prompt = NULL;
  if (terminal) {
    if (lua_getglobal(L, first ? "_PROMPT" : "_PROMPT2") == LUA_TNIL) {
      lua_pop(L, 1);
      lua_pushstring(L, first ? PROMPT : PROMPT2);
    }
    prompt = luaL_tolstring(L, -1, NULL);
    lua_remove(L, -2);
  }
  interrupted = 0;
  fflush(stdout);
  *line = get_line(prompt);
  if (terminal) lua_pop(L, 1);
  if (interrupted) {
    free(*line);
    *line = NULL;
    clearerr(stdin);
    if (terminal) fputs("\n", stdout);
    return LINE_CANCEL;
  }
  return *line ? LINE_OK : LINE_EOF;
}

/* ---- reading chunks ---- */

/* Whether a compilation failed only because the chunk ended too early. */
static int incomplete(lua_State *L, int status) {
  if (status != LUA_ERRSYNTAX) return 0;
  size_t n, k = sizeof EOFMARK - 1;
  const char *msg = lua_tolstring(L, -1, &n);
  return n >= k && strcmp(msg + n - k, EOFMARK) == 0;
}

/* Compiles text as an expression to return, else (unless expr_only) as
 * statements; pushes the function or an error message: the expression's
 * when it only lacks an end (as in "{1,"), else the statements'. */
static int compile(lua_State *L, const char *text, size_t n, int expr_only) {
  lua_pushliteral(L, "return ");
  lua_pushlstring(L, text, n);
  lua_concat(L, 2);
  size_t len;
  const char *expr = lua_tolstring(L, -1, &len);
  int status = luaL_loadbuffer(L, expr, len, CHUNKNAME);
  lua_remove(L, -2);
  if (status == LUA_OK || expr_only) return status;
  int expr_incomplete = incomplete(L, status);
  int stat_status = luaL_loadbuffer(L, text, n, CHUNKNAME);
  if (stat_status == LUA_OK || incomplete(L, stat_status) ||
      !expr_incomplete) {
    lua_remove(L, -2);
    return stat_status;
  }
  lua_pop(L, 1);
  return status;
}

static int ends_with_semicolon(const char *text, size_t n) {
  while (n > 0 && isspace((unsigned char)text[n - 1])) n--;
  return n > 0 && text[n - 1] == ';';
}

/* Adds a chunk read from the terminal to the history, with the mark
 * ("=", "?" or "") that its first line began with. */
static void remember(lua_State *L, const char *mark, const char *text) {
#ifdef ML_HAVE_LIBEDIT
  if (terminal) {
    history_add(lua_pushfstring(L, "%s%s", mark, text));
    lua_pop(L, 1);
  }
#else
  (void)L, (void)mark, (void)text;
#endif
}

#define CHUNK_EOF (-1)
#define CHUNK_CANCEL (-2)

/* What to do with a chunk's values: print them, not (the chunk ends with
 * ';'), or show their help (the first line began with '?'). */
typedef enum { SHOW_PRINT, SHOW_QUIET, SHOW_HELP } show_mode;

/* Reads lines until they form a complete chunk; pushes its function or
 * its syntax error and returns the status, or CHUNK_EOF or CHUNK_CANCEL
 * with nothing pushed. A first line "=expr" stands for "expr"; "?expr"
 * (after blanks) asks for help on the values of the expression expr. The
 * chunk, its lines joined, goes to the history as one entry. */
static int read_chunk(lua_State *L, show_mode *mode) {
  char *line;
  line_status r = read_line(L, 1, &line);
  if (r != LINE_OK) return r == LINE_EOF ? CHUNK_EOF : CHUNK_CANCEL;
  const char *text = line, *mark = "";
  while (isspace((unsigned char)*text)) text++;
  if (*text == '?' || *text == '=') {
    mark = *text == '?' ? "?" : "=";
    text++;
  } else {
    text = line;
  }
  int help = *mark == '?';
  lua_pushstring(L, text);
  free(line);
  for (;;) {
    size_t n;
    text = lua_tolstring(L, -1, &n);
    int status = compile(L, text, n, help);
    *mode = help                          ? SHOW_HELP
            : ends_with_semicolon(text, n) ? SHOW_QUIET
                                           : SHOW_PRINT;
    if (!incomplete(L, status)) {
      remember(L, mark, text);
      lua_remove(L, -2);
      return status;
    }
    r = read_line(L, 0, &line);
    if (r == LINE_CANCEL) {
      lua_pop(L, 2);
      return CHUNK_CANCEL;
    }
    if (r == LINE_EOF) {
      at_eof = 1;
      remember(L, mark, text);
      lua_remove(L, -2);
      return status;
    }
    lua_pop(L, 1);
    lua_pushliteral(L, "\n");
    lua_pushstring(L, line);
    free(line);
    lua_concat(L, 3);
  }
}

/* Prints its arguments through moonlab.shell's show, each starting on its
 * own line, and sets the global _ to the first one. */
static int print_values(lua_State *L) {
  int n = lua_gettop(L);
  lua_pushvalue(L, 1);
  lua_setglobal(L, "_");
  push_shell(L, "show");
  lua_insert(L, 1);
  lua_call(L, n, 1);
  size_t len;
  const char *s = lua_tolstring(L, -1, &len);
  fwrite(s, 1, len, stdout);
  fputc('\n', stdout);
  fflush(stdout);
  return 0;
}

/* ---- completion ---- */

#ifdef ML_HAVE_LIBEDIT

typedef struct {
  char *name;
  char append; /* what follows a unique completion: '(' for functions */
} candidate;

static lua_State *completion_L;
static candidate *candidates;
static size_t ncandidates, candidates_cap;

static void clear_candidates(void) {
  for (size_t i = 0; i < ncandidates; i++) free(candidates[i].name);
  ncandidates = 0;
}

static void add_candidate(const char *name, char append) {
  if (ncandidates == candidates_cap) {
    size_t cap = candidates_cap ? 2 * candidates_cap : 64;
    candidate *c = realloc(candidates, cap * sizeof *c);
    if (!c) return;
    candidates = c;
    candidates_cap = cap;
  }
  char *copy = strdup(name);
  if (!copy) return;
  candidates[ncandidates].name = copy;
  candidates[ncandidates].append = append;
  ncandidates++;
}

/* Collects the candidates of moonlab.shell's complete for the text
 * before the cursor, on the stack. */
static int collect_candidates(lua_State *L) {
  push_shell(L, "complete");
  lua_insert(L, 1);
  lua_call(L, 1, 2);
  lua_Integer n = luaL_len(L, 1);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, 1, i);
    lua_rawgeti(L, 2, i);
    const char *name = lua_tostring(L, -2), *append = lua_tostring(L, -1);
    if (name && append) add_candidate(name, append[0]);
    lua_pop(L, 2);
  }
  return 0;
}

static char *next_candidate(const char *text, int state) {
  static size_t next;
  size_t len = strlen(text);
  if (state == 0) next = 0;
  while (next < ncandidates) {
    const candidate *c = &candidates[next++];
    if (strncmp(c->name, text, len) == 0) return strdup(c->name);
  }
  return NULL;
}

/* Completes the word that ends at the cursor (end): after "a.b." or
 * "a.b:" with the fields or methods of the value a.b, else with globals
 * and keywords. */
static char **complete(const char *text, int start, int end) {
  lua_State *L = completion_L;
  (void)start;
  rl_attempted_completion_over = 1;
  rl_completion_append_character = '\0';
  clear_candidates();
  if (lua_checkstack(L, 8)) {
    lua_pushcfunction(L, collect_candidates);
    lua_pushlstring(L, rl_line_buffer, (size_t)end);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) lua_pop(L, 1);
  }
  char **matches = rl_completion_matches(text, next_candidate);
  /* A single match comes as {match, NULL} (readline) or as {match,
   * match, NULL} (libedit). */
  if (matches && matches[0] && (!matches[1] || !matches[2]))
    for (size_t i = 0; i < ncandidates; i++)
      if (strcmp(candidates[i].name, matches[0]) == 0)
        rl_completion_append_character = candidates[i].append;
  return matches;
}

static void editing_open(lua_State *L) {
  static char word_breaks[] = " \t\n\"\\'`@$><=;|&{(}[],+-*/%^~#.:)?!";
  completion_L = L;
  rl_readline_name = "moonlab";
  rl_basic_word_break_characters = word_breaks;
  rl_completer_word_break_characters = word_breaks;
  rl_attempted_completion_function = complete;
  history_open();
}

#endif

/* ---- the loop ---- */

/* The global help, unless the session has its own: moonlab.shell's. */
static void define_help(lua_State *L) {
  if (lua_getglobal(L, "help") == LUA_TNIL) {
    push_shell(L, "help");
    lua_setglobal(L, "help");
  }
  lua_pop(L, 1);
}

void repl_run(lua_State *L) {
  struct sigaction old;
  int top = lua_gettop(L);
  open_shell(L);
  define_help(L);
  terminal = isatty(STDIN_FILENO);
#ifdef ML_HAVE_LIBEDIT
  if (terminal) editing_open(L);
#endif
  sigaction(SIGINT, NULL, &old);
  set_sigint(on_sigint_prompt);
  at_eof = 0;
  while (!at_eof) {
    show_mode mode;
    int status = read_chunk(L, &mode);
    if (status == CHUNK_EOF) break;
    if (status == CHUNK_CANCEL) continue;
    if (status == LUA_OK) {
      int base = lua_gettop(L);
      status = repl_call(L, 0, LUA_MULTRET);
      if (status == LUA_OK && mode == SHOW_HELP) {
        push_shell(L, "help");
        lua_insert(L, base);
        status = repl_call(L, lua_gettop(L) - base, LUA_MULTRET);
      }
      int n = lua_gettop(L) - base + 1;
      if (status == LUA_OK && n > 0 && mode != SHOW_QUIET) {
        lua_pushcfunction(L, print_values);
        lua_insert(L, base);
        status = repl_call(L, n, 0);
      }
    }
    if (status != LUA_OK && call_interrupted && terminal)
      fputs("\n", stderr); /* after the terminal's "^C" */
    repl_report(L, NULL, status);
    lua_settop(L, top);
  }
  if (terminal) fputs("\n", stdout);
  fflush(stdout);
  sigaction(SIGINT, &old, NULL);
}
