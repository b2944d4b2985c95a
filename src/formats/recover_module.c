/* src/formats/recover_module.c - the entry of fxtrace-recover.so, the recovery a traced process
 * loads the first time it finds a dead session to harvest (src/host/harvest.h):
 * fxt_recover_direct under the one name the module exports. Not in the formats library. */
#include "../base/recover.h"

/* Its name is FXT_RECOVER_ENTRY (recover.h: the number is the table's version). */
__attribute__((visibility("default"))) const struct fxt_recover_ops *fxt_recover_module_ops_2(void);

const struct fxt_recover_ops *fxt_recover_module_ops_2(void)
{
  return &fxt_recover_direct;
}
