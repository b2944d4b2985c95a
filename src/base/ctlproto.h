/* ctlproto.h - the live-control protocol: what a traced process's server (src/host/server.h)
 * and its clients (`fxtrace ps/ls/cat/write/mount`, tools/fxtrace/control_*.c, mount.c) must
 * agree on - where the socket is, the request and reply frames, their limits. In src/base
 * because both sides use it and neither may include the other's private headers; pure
 * functions of their arguments and the environment, no server state (ctlproto.c).
 *
 * Where. <dir>/<pid>.sock, dir = $FXTRACE_DIR, else $XDG_RUNTIME_DIR/fxtrace, else
 * /tmp/fxtrace-<euid>. The server creates dir (mode 0700) when it is missing, then checks it
 * with lstat: a real directory (not a symlink), owned by the effective uid, no group or other
 * permission bits. Anything else: a message on stderr and no socket; tracing goes on. The
 * socket is bound under a temporary name, made 0600 and renamed into place once it listens,
 * so a `<pid>.sock` that refuses connections (ECONNREFUSED) is always stale (its process died
 * or exec'd) and `fxtrace ps` removes it. Peers are checked with SO_PEERCRED: only the same
 * effective uid, or root, gets in; anybody else is disconnected without a reply.
 *
 * Protocol, version 1. Integers in native byte order (both ends are on one host).
 *
 *   request   u32 size           bytes that follow: 6 .. FXT_CTL_MAX_REQUEST
 *             u8  version        FXT_CTL_VERSION
 *             u8  op             enum fxt_ctl_op
 *             u16 flags          FXT_CTL_F_* the op allows; every other bit 0
 *             u16 path_len       0 .. FXT_CTL_MAX_PATH
 *             path[path_len]     relative to the tree's root ("" = the root); no NUL byte
 *             value[size - 6 - path_len]   WRITE only; every other op has none
 *
 *   reply     one or more frames, each
 *             u32 size           bytes that follow: 4 .. 4 + FXT_CTL_MAX_CHUNK
 *             i32 status         FXT_CTL_MORE: data, and more frames follow;
 *                                0: the last frame of a successful reply (data: the rest);
 *                                < 0: failed, a negative Linux errno; data: a message; last
 *             data[size - 4]
 *
 *   op      path   reply data
 *   INFO    -      "key=value\n" lines: pid, comm, session (running|stopped), output (the
 *                  session's file, "" for none), tracing_on, events (enabled tracepoints)
 *   LIST    dir    one line per entry: "d NAME\n" (directory) or "f NAME\n" (file)
 *   STAT    path   "d\n" for a directory; for a file "f " + "r", "w" or "rw" + "\n"
 *   READ    file   the content, as reading it from start to end (a snapshot taken at open);
 *                  trace_pipe: the lines ready now, consumed, without waiting
 *   WRITE   file   opens it for writing (as O_TRUNC with FXT_CTL_F_TRUNC: clears trace,
 *                  set_event, the pid lists) and, unless value is empty, writes value in one
 *                  write: `echo -n VALUE > FILE` with TRUNC, `>> FILE` without. An empty
 *                  value without TRUNC only checks that the file can be opened for writing.
 *   PIPE    file   as READ, but trace_pipe streams: MORE frames as lines arrive, until the
 *                  client closes the connection (no last frame)
 *   SNAPSHOT file  writes a snapshot of the session (fxt_snapshot) to file, an absolute path
 *                  outside the tree (the peer has this process's uid, so may write there
 *                  anyway); reply "snapshot FILE\n"
 *
 */
#ifndef FXT_BASE_CTLPROTO_H
#define FXT_BASE_CTLPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FXT_CTL_VERSION 1
#define FXT_CTL_MAX_REQUEST 65536u /* bytes of a request after its size word */
#define FXT_CTL_MAX_PATH 4095u
#define FXT_CTL_MAX_CHUNK 65536u   /* data bytes of a reply frame */
#define FXT_CTL_REQ_HEADER 10u     /* size word + version, op, flags, path_len */
#define FXT_CTL_REPLY_HEADER 8u    /* size word + status */
#define FXT_CTL_MORE 1             /* reply status: more frames follow */

enum fxt_ctl_op {
  FXT_CTL_INFO = 1,
  FXT_CTL_LIST = 2,
  FXT_CTL_STAT = 3,
  FXT_CTL_READ = 4,
  FXT_CTL_WRITE = 5,
  FXT_CTL_PIPE = 6,
  FXT_CTL_SNAPSHOT = 7,
};

#define FXT_CTL_F_TRUNC 1u /* WRITE: as O_TRUNC */

/* A parsed request; path and value point into the parsed bytes. path is not NUL-terminated
 * (it has no NUL byte: copy path_len bytes). */
struct fxt_ctl_request {
  uint8_t op;
  uint16_t flags;
  const char *path;
  size_t path_len;
  const unsigned char *value;
  size_t value_len;
};

/* ---- the frames (ctlproto.c) ---------------------------------------------------------- */

/* Parses the request at the start of buf[0..len). Returns 1 with *req and *used (the bytes of
 * the whole frame); 0 when more bytes are needed (*used: the frame's size once its size word
 * is in, else FXT_CTL_REQ_HEADER); FXT_EMSGSIZE (size out of range) or FXT_EBADMSG
 * (malformed; FXT_EPROTO is not in errors.h) with the reason in err. err may be NULL. */
int fxt_ctl_parse(const void *buf, size_t len, struct fxt_ctl_request *req, size_t *used,
                  char *err, size_t err_size);

/* Encodes a request into out (cap bytes). Returns its length, or FXT_EINVAL (a path or value
 * the protocol cannot carry) / FXT_ENOBUFS (cap too small). */
long fxt_ctl_encode_request(void *out, size_t cap, uint8_t op, uint16_t flags,
                            const char *path, const void *value, size_t value_len);

/* Writes a reply frame header for status and data_len bytes of data into out. */
void fxt_ctl_reply_header(unsigned char out[FXT_CTL_REPLY_HEADER], int32_t status,
                          uint32_t data_len);

/* Parses a reply frame header at the start of buf[0..len): returns 1 with *status and
 * *data_len (the frame is FXT_CTL_REPLY_HEADER + *data_len bytes), 0 when fewer than
 * FXT_CTL_REPLY_HEADER bytes are in, FXT_EBADMSG for a size out of range or a status that is
 * neither MORE, 0 nor a negative errno (>= -4095). */
int fxt_ctl_parse_reply(const void *buf, size_t len, int32_t *status, uint32_t *data_len);

/* The runtime directory (see above) into out. Returns 0, or FXT_E2BIG when it does not fit. */
int fxt_ctl_dir(char *out, size_t size);

/* Checks dir (creating it 0700 first when create and it is missing): a directory, not a
 * symlink, owned by the effective uid, no group/other bits. Returns 0, or FXT_EPERM /
 * FXT_ENOENT with the reason in err ("mode 0777 lets group or others in (want 0700)"). */
int fxt_ctl_dir_check(const char *dir, bool create, char *err, size_t err_size);

/* "<dir>/<pid>.sock" into out; FXT_E2BIG when longer than a Unix socket address allows. */
int fxt_ctl_socket_path(const char *dir, long pid, char *out, size_t size);

#endif
