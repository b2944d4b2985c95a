/* fuzz/fuzz_fgraph.c - libFuzzer target for report's function_graph layout (formats/fgraph.h)
 * and the trace.dat writer's function tracer records (tracedat_write_fn.h) on any FXT input.
 *
 * The input is read as an fxtrace file (fxtf_load); when it loads, its function_graph layout
 * is printed, with the default options and with the options (`fxtrace report -O`) the input's
 * size picks, and it is converted to trace.dat (into a sink that only counts); the input's
 * first bytes are read as an -O word too. Properties checked (abort() on a violation, on top
 * of ASan/UBSan):
 *  - the layout prints something exactly when the file has a slice, starting with the
 *    kernel's "# tracer: function_graph" header and ending with '\n', with any options;
 *  - every "() {" line has its "}" line: the calls opened are all closed (with the CPU column
 *    and without funcgraph-tail, where a "}" line ends with " }");
 *  - an -O word changes one option's bit at the most;
 *  - the conversion succeeds on every file that loads (the writer reads what the reader
 *    reads).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/base/fgraph_text.h"
#include "../src/formats/fgraph.h"
#include "../src/formats/fxtfile.h"
#include "../src/formats/tracedat_write.h"

static void check(int ok) {
  if (!ok)
    abort();
}

static bool sink(void *ctx, struct fxt_tbuf *b) {
  fxt_tbuf_put(ctx, b->data, b->len);
  b->len = 0;
  return true;
}

static int count_write(void *ctx, const void *data, size_t n) {
  (void)data;
  *(size_t *)ctx += n;
  return 0;
}

/* Lines of out that end with s. */
static size_t lines_ending(const struct fxt_tbuf *out, const char *s) {
  size_t n = 0, k = strlen(s);
  for (size_t i = 0; i < out->len; i++)
    if (out->data[i] == '\n' && i >= k && memcmp(out->data + i - k, s, k) == 0)
      n++;
  return n;
}

/* f's layout with opts, its properties checked. */
static void layout(const struct fxtf_file *f, uint32_t opts) {
  char err[FXTF_ERR_SIZE];
  struct fxt_tbuf b, out;
  fxt_tbuf_init(&b);
  fxt_tbuf_init(&out);
  bool any = false;
  int rc = fxt_fgraph_print(f, NULL, opts, &b, 4096, sink, &out, &any, err, sizeof err);
  sink(&out, &b);
  check(rc == 0 || rc == FXT_ENOMEM);
  if (rc == 0) {
    check(any == (out.len > 0));
    if (any) {
      check(out.len >= 25 && memcmp(out.data, "# tracer: function_graph\n", 25) == 0);
      check(out.data[out.len - 1] == '\n');
      if (!(opts & (FXT_FGRAPH_NO_CPU | FXT_FGRAPH_TAIL)))
        check(lines_ending(&out, "() {") == lines_ending(&out, " }"));
    }
  }
  fxt_tbuf_free(&b);
  fxt_tbuf_free(&out);
}

/* The bits of the options fxt_fgraph_option_word may change. */
static bool one_option(uint32_t changed) {
  const struct fxt_fgraph_option *o;
  for (size_t i = 0; (o = fxt_fgraph_option(i)) != NULL; i++)
    if ((changed & ~o->bit) == 0)
      return true;
  return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint32_t before = (uint32_t)size & 63, opts = before;
  bool named = fxt_fgraph_option_word((const char *)data, size < 24 ? size : 24, &opts);
  check(named ? one_option(opts ^ before) : opts == before);
  struct fxtf_file *f = NULL;
  char err[FXTF_ERR_SIZE];
  if (fxtf_load(data, size, &f, err, sizeof err) != 0)
    return 0;
  layout(f, 0);
  if (before != 0)
    layout(f, before);
  fxtf_close(f);

  size_t written = 0;
  struct fxt_tracedat_options o = {0};
  o.write = count_write;
  o.write_ctx = &written;
  o.uname = "Linux fuzz 6.18 x86_64";
  o.run_bytes = 1u << 16;
  struct fxt_tracedat_stats st;
  int rc = fxt_tracedat_convert(data, size, &o, &st, err, sizeof err);
  check(rc == 0 || rc == FXT_ENOMEM || rc == FXT_E2BIG || rc == FXT_ENOSPC);
  return 0;
}
