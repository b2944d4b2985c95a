/* src/formats/recover_module.c - the entry of fxtrace-recover.so, the recovery a traced process
 * loads the first time it finds a dead session to harvest (src/host/harvest.h):
 * fxt_recover_direct under the one name the module exports. Not in the formats library. */
#include "../base/recover.h"

__attribute__((visibility("default"))) const struct fxt_recover_ops *fxt_recover_module_ops(void);

const struct fxt_recover_ops *fxt_recover_module_ops(void)
{
  return &fxt_recover_direct;
}
