/* tools/fxtrace/record_merge.h - merging the per-process traces of `fxtrace record`. */
#ifndef FXTRACE_TOOLS_RECORD_MERGE_H
#define FXTRACE_TOOLS_RECORD_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fxtrace/fxt.h>

/* Concatenates every "*.fxt" of dir into output, ordered by modification time then pid (the
 * number in "fxtrace-PID.fxt"): the first whole, the others without their magic record. A
 * file that stops decoding part-way (its process was killed while writing) contributes its
 * records up to the first bad one, with a warning; one without a magic record is skipped.
 * Returns the number of files merged (output is written only when it is > 0), or -1 after
 * printing an error; *found gets the number of trace files dir held. */
int record_merge(const char *dir, const char *output, size_t *found);

/* The pieces `fxtrace merge` shares with it: */

/* Called for each record of a part that decodes (rec->offset and rec->size locate its bytes;
 * d resolves its refs). A nonzero return stops the walk and is returned by fxt_part_walk. */
typedef int (*fxt_part_fn)(void *ctx, const struct fxt_decoder *d, const struct fxt_record *rec);
/* Decodes buf[0..len) strictly, record by record, calling fn (may be NULL) on each. A part
 * with a torn tail (it ends inside a record: a write cut short, its writer killed, a full
 * disk) keeps the records before it, with report's warning naming the offset (cli_torn), or
 * is refused when strict (FXT_EBADMSG); a part that stops decoding part-way for another
 * reason keeps the records before the bad one: "fxtrace CMD: warning: PATH: offset N: reason;
 * keeping its first K bytes" on stderr. *valid gets the bytes of the records that decoded.
 * Returns 0, fn's nonzero value, FXT_EBADMSG (strict, torn) or FXT_ENOMEM. */
int fxt_part_walk(const char *cmd, const char *path, const void *buf, size_t len, bool strict,
                  fxt_part_fn fn, void *ctx, uint64_t *valid);

#endif /* FXTRACE_TOOLS_RECORD_MERGE_H */
