/* A program built against the installed library: writes one record and reads it back. */
#include <fxtrace/version.h>
#include <fxtrace/writer.h>
#include <stdio.h>
#include <string.h>

static _Alignas(8) unsigned char storage[256];
static unsigned char out[256];

static int copy(void *ctx, uint32_t off, const void *src, uint32_t len)
{
  (void)ctx;
  memcpy(out + off, src, len);
  return 0;
}

int main(void)
{
  struct fxt_writer w;
  struct fxt_reservation res;
  /* A one-word metadata record (the FXT magic word). */
  const uint64_t magic = 0x0016547846040010u;
  if (fxt_writer_init(&w, storage, sizeof(storage), 1, 2) != 0 ||
      fxt_writer_reserve(&w, magic, &res) != 0)
    return 1;
  fxt_res_commit(&res);
  if (fxt_writer_read(&w, copy, NULL, sizeof(out)) != 8 || memcmp(out, &magic, 8) != 0)
    return 1;
  printf("fxtrace %s: consumer ok\n", fxt_version_string());
  return 0;
}
