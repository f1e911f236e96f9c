/* The shell's evaluation helpers and its read-eval-print loop. main.c
 * parses the command line, as lua.c does, and runs everything through
 * these. */
#ifndef ML_REPL_H
#define ML_REPL_H

#include <lua.h>

/* Calls the function lying under narg arguments on top of L, in protected
 * mode with a message handler that appends a traceback of the Lua code
 * (the shell's own C frame left out). While it runs, Ctrl-C stops the Lua
 * code with an "interrupted!" error and asks the core's loops to stop
 * (ml_interrupt_request); a second Ctrl-C kills the process, as in lua.
 * Returns a Lua status; on an error the message is on top of L. */
int repl_call(lua_State *L, int narg, int nres);

/* When status is not LUA_OK, writes the message on top of L to stderr,
 * after "progname: " when progname is not NULL, and pops it. Returns
 * status. */
int repl_report(lua_State *L, const char *progname, int status);

/* The interactive loop on stdin until end of input: prompts "moonlab> "
 * and ">> " (or the globals _PROMPT and _PROMPT2) when stdin is a
 * terminal, none otherwise. Results print through moonlab.shell (each
 * value on its own line, tables nested); "?expr" passes expr's values to
 * the help, which is also the global help unless one exists. Line editing,
 * tab completion and history when built with libedit and stdin is a
 * terminal: each statement is appended to $MOONLAB_HISTORY (empty: none),
 * else ~/.moonlab_history, as soon as it is read. */
void repl_run(lua_State *L);

#endif
