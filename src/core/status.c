#include "status.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>

static _Thread_local char message[512];
static volatile sig_atomic_t interrupted;

int ml_fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  return code;
}

const char *ml_last_error(void) { return message; }

void ml_interrupt_request(void) { interrupted = 1; }
int ml_interrupt_pending(void) { return interrupted; }

int ml_interrupt_take(void) {
  int was = interrupted;
  interrupted = 0;
  return was;
}
