/* tools/fxtrace/control_client.h - the client side of live control: connecting to a traced
 * process's socket and speaking the protocol of src/base/ctlproto.h. Used by `fxtrace ps`, `ls`,
 * `cat`, `write` (control_cmds.c) and `mount` (mount.c).
 */
#ifndef FXTRACE_TOOLS_CONTROL_CLIENT_H
#define FXTRACE_TOOLS_CONTROL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/ctlproto.h"

#define CTL_TIMEOUT_MS 10000 /* a reply that does not come: the process is stopped or stuck */

struct ctl_conn {
  int fd;
  long pid;
  int timeout_ms; /* ctl_call's wait for each reply frame (CTL_TIMEOUT_MS after connect) */
  unsigned char *buf; /* received bytes: [off, len) not yet returned */
  size_t off, len, cap;
  char msg[256]; /* the last error reply's message (ctl_call, ctl_note_error); "" for none */
};

/* The checked runtime directory into dir. Returns 0, or a negative errno with the reason in
 * err ("DIR: mode 0777 lets group or others in (want 0700)"). */
int ctl_dir(char *dir, size_t size, char *err, size_t err_size);

/* Connects to process pid in dir. The server must be the same user or root, and pid itself
 * (SO_PEERCRED). Returns 0, -ENOENT (no socket: not traced, or another user's), -ECONNREFUSED
 * (a stale socket: the process is gone), or another negative errno; err says which. */
int ctl_connect(const char *dir, long pid, struct ctl_conn *c, char *err, size_t err_size);
void ctl_close(struct ctl_conn *c);

/* Keeps the message of an error frame (status < 0, data[0..len)) in c->msg. */
void ctl_note_error(struct ctl_conn *c, const unsigned char *data, uint32_t len);

/* Sends one request. Returns 0 or a negative errno. */
int ctl_send(struct ctl_conn *c, uint8_t op, uint16_t flags, const char *path,
             const void *value, size_t value_len);

/* Receives the next reply frame, waiting up to timeout_ms (-1: forever). Returns 1 with
 * *status and data (valid until the next call on c), 0 when the server closed the connection,
 * -ETIMEDOUT, -EINTR (a signal; only when the caller's handler does not restart), -EBADMSG
 * (not a frame), or another negative errno. */
int ctl_frame(struct ctl_conn *c, int32_t *status, const unsigned char **data, uint32_t *len,
              int timeout_ms);

/* Whether a frame is ready without waiting (buffered, or readable on the socket). */
bool ctl_pending(const struct ctl_conn *c);

/* One request and its whole reply: returns the reply's status (0, or the negative errno of
 * the file operation), with the data (NUL-terminated, malloc'd) in *out and *out_len; or a
 * connection error as in ctl_frame (-EPIPE for a closed connection). out may be NULL. */
int ctl_call(struct ctl_conn *c, uint8_t op, uint16_t flags, const char *path,
             const void *value, size_t value_len, char **out, size_t *out_len);

/* Parses a decimal pid (1..2^22-ish, anything the kernel can give). False when it is not. */
bool ctl_parse_pid(const char *s, long *pid);

#endif
