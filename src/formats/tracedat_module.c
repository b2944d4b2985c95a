/* src/formats/tracedat_module.c - the entry of fxtrace-tracedat.so, the trace.dat writer a
 * traced process loads at the end of a session whose output is X.dat (src/host/outfile.h):
 * fxt_tracedat_file under the one name the module exports. Not in the formats library. */
#include "tracedat_write.h"

__attribute__((visibility("default"))) int fxt_tracedat_module_file(
    const char *in_path, const char *out_path, struct fxt_tracedat_stats *st, char *err,
    size_t err_size);

int fxt_tracedat_module_file(const char *in_path, const char *out_path,
                             struct fxt_tracedat_stats *st, char *err, size_t err_size) {
  return fxt_tracedat_file(in_path, out_path, st, err, err_size);
}
