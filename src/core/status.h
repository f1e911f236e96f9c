/* Status codes and error messages of the core.
 *
 * Core and backend functions return ML_OK or an error code; the message that
 * explains an error is formatted once, where it is detected, with ml_fail(),
 * and read by the binding that raises it as a Lua error. The message buffer
 * is thread-local, so OpenMP workers never see each other's messages. */
#ifndef ML_STATUS_H
#define ML_STATUS_H

enum {
  ML_OK = 0,
  ML_EINVAL,    /* bad argument: shape, dtype, range */
  ML_ENOMEM,    /* out of memory on some device */
  ML_EIO,       /* file missing, truncated or corrupt */
  ML_EDEVICE,   /* device or driver failure */
  ML_EINTR      /* interrupted by the user */
};

/* Formats the message for the current error and returns code. */
int ml_fail(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The message of the last ml_fail() on this thread. */
const char *ml_last_error(void);

/* Set by the shell's SIGINT handler; long CPU loops poll it between chunks
 * and return ML_EINTR. ml_interrupt_take() clears it. */
void ml_interrupt_request(void);
int ml_interrupt_pending(void);
int ml_interrupt_take(void);

#endif
