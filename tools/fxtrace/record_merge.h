/* tools/fxtrace/record_merge.h - merging the per-process traces of `fxtrace record`. */
#ifndef FXTRACE_TOOLS_RECORD_MERGE_H
#define FXTRACE_TOOLS_RECORD_MERGE_H

#include <stddef.h>

/* Concatenates every "*.fxt" of dir into output, ordered by modification time then pid (the
 * number in "fxtrace-PID.fxt"): the first whole, the others without their magic record. A
 * file that stops decoding part-way (its process was killed while writing) contributes its
 * records up to the first bad one, with a warning; one without a magic record is skipped.
 * Returns the number of files merged (output is written only when it is > 0), or -1 after
 * printing an error; *found gets the number of trace files dir held. */
int record_merge(const char *dir, const char *output, size_t *found);

#endif /* FXTRACE_TOOLS_RECORD_MERGE_H */
