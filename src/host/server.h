/* server.h - live control: this process's tracefs tree (fxtrace/tracefs.h) served on a Unix
 * socket, for `fxtrace ps/ls/cat/write/mount` (tools/fxtrace/control_*.c, mount.c). Where the
 * socket is and the protocol spoken on it, which the clients share: src/base/ctlproto.h.
 *
 * Requests on one connection are served one after another: a reply is complete before the
 * next request is read. A malformed request (size, version, op, flags, path) gets one error
 * frame and the connection is closed; it never reaches the tree, so tracing is never
 * disturbed.
 *
 * Deadlines. No client holds the server, a connection or memory for long. With T =
 * FXT_CTL_STALL_MS ($FXTRACE_CTL_TIMEOUT_MS, 1..3600000, when set at start): a request that
 * stalls half-way for T (after a last frame -ETIMEDOUT "request incomplete ..."), or a reply
 * (an error frame included) of which nothing is taken for T, drops the connection; a connection that is quiet (nothing asked, nothing to send; or a
 * trace_pipe stream whose reader takes nothing) for 6 T is closed; and when all
 * FXT_CTL_MAX_CLIENTS connections are taken, a new one takes the place of the one quiet the
 * longest (closed without a word, as an idle timeout: a client reconnects) if that one has
 * been quiet for min(T, 1 s), so quiet clients keep a new one out for that long at most;
 * otherwise the new one gets FXT_EBUSY with the reason. READ texts are made whole at open
 * (`trace`: the live view, formatted): while those of replies still being sent hold 32 MiB, a
 * READ of `trace` gets FXT_EBUSY with the reason (they are taken, or dropped after T), so
 * clients that never read cannot make the process grow.
 */
#ifndef FXT_HOST_SERVER_H
#define FXT_HOST_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/ctlproto.h"

#define FXT_CTL_STALL_MS 10000 /* T of the deadlines above */
#define FXT_CTL_MAX_CLIENTS 64  /* connections served at once */

/* ---- requests on the tree (server_ops.c) -------------------------------------------------- */

struct fxt_tbuf;

/* Serves INFO, LIST, STAT or WRITE of req (path: req's path, NUL-terminated): the reply's data
 * into out. Returns 0, or the tree's negative errno (FXT_ENOENT, FXT_EINVAL, ...); FXT_EINVAL
 * for READ and PIPE, which server.c serves as streams. */
int fxt_srv_answer(const struct fxt_ctl_request *req, const char *path, struct fxt_tbuf *out);

/* Bytes of f's text, made at open (tracefs.c): what an open READ holds until it is closed. */
struct fxt_fs_file;
size_t fxt_fs_held_bytes(const struct fxt_fs_file *f);
/* Whether path is `trace`, whose text is the whole live view (every other file's is small). */
bool fxt_fs_is_view(const char *path);

/* ---- the server (server.c) --------------------------------------------------------------- */

/* Starts serving (idempotent: 0 when already running). Called by fxt_session_start after it
 * released its lock. Returns 0, FXT_EPERM / FXT_ENOENT (runtime directory refused: reported
 * on stderr), FXT_E2BIG (path too long), or another negative errno (socket, thread). */
int fxt_server_start(void);

/* Stops serving: wakes and joins the server thread, closes every connection, removes the
 * socket. Idempotent. Must not be called with the session's lock held (the server thread
 * may be waiting for it inside a tracefs call). */
void fxt_server_stop(void);

/* 1 while the server runs; the socket's path into path (may be NULL). */
int fxt_server_running(char *path, size_t size);

/* fork: prepare holds the server between requests (so the child never inherits a tracefs
 * lock taken by the server thread), parent releases it; the child resets the server state it
 * inherited (without touching the parent's socket) and, when the parent was serving, serves
 * on a socket of its own pid. */
void fxt_server_fork_prepare(void);
void fxt_server_fork_parent(void);
void fxt_server_after_fork(void);

#endif
