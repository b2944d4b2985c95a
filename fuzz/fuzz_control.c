/* fuzz/fuzz_control.c - libFuzzer target for the live-control protocol parsers
 * (src/base/ctlproto.h): fxt_ctl_parse, the server's request parser, and fxt_ctl_parse_reply,
 * the tools' reply-frame parser. The input is read as a stream of requests (as a client
 * connection delivers it) and, independently, as a stream of reply frames.
 *
 * The input is copied into a heap buffer of exactly its size, so ASan sees any read past the
 * end. Properties checked (abort() on any violation, on top of ASan/UBSan):
 *  - fxt_ctl_parse returns 1, 0, FXT_EMSGSIZE or FXT_EBADMSG, the same with err NULL; an
 *    error comes with a NUL-terminated message that fits err; a short err buffer holds a
 *    prefix of it;
 *  - on 1: the frame is inside the input (10 <= used <= 4 + FXT_CTL_MAX_REQUEST); op and
 *    flags are ones the op allows; the path lies in the frame right after the header, has no
 *    NUL and at most FXT_CTL_MAX_PATH bytes; the value fills the rest of the frame and only
 *    WRITE has one; fxt_ctl_encode_request of the parsed request gives back the frame's bytes;
 *    every shorter prefix of the frame parses as "need more" (0);
 *  - on 0: more bytes than are there are needed, never more than a whole maximal frame;
 *  - fxt_ctl_parse_reply: 1 only with a status of MORE, 0 or -1..-4095 and a data length of at
 *    most FXT_CTL_MAX_CHUNK, and fxt_ctl_reply_header rebuilds the same 8 bytes; 0 only for
 *    fewer than 8 bytes.
 */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fxtrace/errors.h>

#include "../src/base/ctlproto.h"

static void check(int ok)
{
  if (!ok)
    abort();
}

static void requests(const unsigned char *buf, size_t size)
{
  static unsigned char enc[4 + FXT_CTL_MAX_REQUEST];
  size_t off = 0;
  while (off < size) {
    const unsigned char *p = buf + off;
    size_t left = size - off, used = 0, used2 = 0;
    struct fxt_ctl_request req, req2;
    char err[160], small[8];
    memset(err, 'x', sizeof(err));
    int rc = fxt_ctl_parse(p, left, &req, &used, err, sizeof(err));
    check(rc == 1 || rc == 0 || rc == FXT_EMSGSIZE || rc == FXT_EBADMSG);
    check(fxt_ctl_parse(p, left, &req2, &used2, NULL, 0) == rc);
    if (rc < 0) {
      size_t n = strnlen(err, sizeof(err));
      check(n > 0 && n < sizeof(err));
      check(fxt_ctl_parse(p, left, &req2, &used2, small, sizeof(small)) == rc);
      check(strnlen(small, sizeof(small)) < sizeof(small) && strncmp(small, err, 7) == 0);
      return; /* the server answers and hangs up: nothing after an error is read */
    }
    if (rc == 0) {
      check(used > left && used <= 4 + FXT_CTL_MAX_REQUEST);
      return;
    }
    check(used == used2 && used >= FXT_CTL_REQ_HEADER && used <= left &&
          used <= 4 + FXT_CTL_MAX_REQUEST);
    check(req.op >= FXT_CTL_INFO && req.op <= FXT_CTL_SNAPSHOT);
    check(req.op != FXT_CTL_SNAPSHOT || (req.path_len > 0 && req.path[0] == '/'));
    check((req.flags & ~(req.op == FXT_CTL_WRITE ? FXT_CTL_F_TRUNC : 0u)) == 0);
    check((const unsigned char *)req.path == p + FXT_CTL_REQ_HEADER);
    check(req.path_len <= FXT_CTL_MAX_PATH && !memchr(req.path, 0, req.path_len));
    check(req.value == p + FXT_CTL_REQ_HEADER + req.path_len);
    check(FXT_CTL_REQ_HEADER + req.path_len + req.value_len == used);
    check(req.op == FXT_CTL_WRITE || req.value_len == 0);
    check(req.op != FXT_CTL_INFO || req.path_len == 0);
    /* Round trip: the path as a C string (it has no NUL), the value as bytes. */
    char path[FXT_CTL_MAX_PATH + 1];
    memcpy(path, req.path, req.path_len);
    path[req.path_len] = 0;
    long n = fxt_ctl_encode_request(enc, sizeof(enc), req.op, req.flags, path, req.value,
                                    req.value_len);
    check(n == (long)used && memcmp(enc, p, used) == 0);
    /* Any cut of the frame is "need more", never an error or a request. */
    for (size_t cut = 0; cut < used; cut += 1 + cut / 2)
      check(fxt_ctl_parse(p, cut, &req2, &used2, NULL, 0) == 0);
    off += used;
  }
}

static void replies(const unsigned char *buf, size_t size)
{
  size_t off = 0;
  for (;;) {
    int32_t status;
    uint32_t len;
    int rc = fxt_ctl_parse_reply(buf + off, size - off, &status, &len);
    check(rc == 1 || rc == 0 || rc == FXT_EBADMSG);
    if (rc == 0) {
      check(size - off < FXT_CTL_REPLY_HEADER);
      return;
    }
    if (rc < 0)
      return;
    check(status == FXT_CTL_MORE || (status <= 0 && status >= -4095));
    check(len <= FXT_CTL_MAX_CHUNK);
    unsigned char h[FXT_CTL_REPLY_HEADER];
    fxt_ctl_reply_header(h, status, len);
    check(memcmp(h, buf + off, sizeof(h)) == 0);
    if (size - off - FXT_CTL_REPLY_HEADER < len)
      return; /* the rest of the frame has not come */
    off += FXT_CTL_REPLY_HEADER + len;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  unsigned char *buf = malloc(size ? size : 1);
  if (!buf)
    return 0;
  if (size)
    memcpy(buf, data, size);
  requests(buf, size);
  replies(buf, size);
  free(buf);
  return 0;
}
