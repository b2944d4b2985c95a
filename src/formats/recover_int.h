/* recover_int.h - what the files of recovery share beyond its model of a dead session
 * (src/base/recover_header.h): recover_model.c builds the model, recover.c writes the trace
 * from it. */
#ifndef FXT_EXPORT_RECOVER_INT_H
#define FXT_EXPORT_RECOVER_INT_H

#include "../base/recover_header.h"

/* recover_model.c */
int rec_model_build(struct rec_model *m); /* 0, or FXT_EBADMSG (unusable header), FXT_ENOMEM */
void rec_model_free(struct rec_model *m);
bool rec_is_meta(uint64_t header); /* a kernel:meta event (bookkeeping) */

/* recover.c: what the buffers directory's clean-up asks of a dead session
 * (fxt_recover_dead_state's answer, through fxt_recover_direct: src/host/harvest.h). */
enum fxt_rec_dead fxt_recover_dead_summary(const char *dir);

#endif
