/* src/formats/tracedat_write_file.c - an FXT file written as a trace.dat file (tracedat_write.h):
 * the file plumbing (fileio.h) around fxt_tracedat_convert for the session's `output=X.dat` and
 * `fxtrace record -o X.dat`. */
#include "tracedat_write.h"

#include <stdio.h>
#include <string.h>

#include "fileio.h"

int fxt_tracedat_file(const char *in_path, const char *out_path, struct fxt_tracedat_stats *st,
                      char *err, size_t err_size) {
  struct fxt_fio_in in;
  char why[FXT_FIO_ERR_SIZE];
  int rc = fxt_fio_map(&in, in_path, why, sizeof why);
  if (rc != 0) {
    snprintf(err, err_size, "%s: %s", in_path, why);
    return rc;
  }
  struct fxt_fio_out out = FXT_FIO_OUT(out_path, 0644);
  struct fxt_tracedat_options opt = {.write = fxt_fio_write, .write_ctx = &out,
                                     .release = fxt_fio_release, .release_ctx = &in};
  rc = fxt_fio_close(&out, fxt_tracedat_convert(in.data, in.len, &opt, st, err, err_size));
  if (out.saved_errno != 0)
    snprintf(err, err_size, "%s: %s", out_path, strerror(out.saved_errno));
  fxt_fio_unmap(&in);
  return rc;
}
