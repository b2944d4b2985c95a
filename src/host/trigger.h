/* trigger.h - the trigger option (trigger.c): its fatal-signal handlers (installed and removed
 * under the session's lock), which write a snapshot, and a thread's alternate signal stack
 * (when it takes a slot). */
#ifndef FXTRACE_HOST_TRIGGER_H
#define FXTRACE_HOST_TRIGGER_H

struct slot_info;

int fxt_trigger_install(const char *path);
/* A child of fork: its own snapshot file (the handlers are inherited). */
void fxt_trigger_set_path(const char *path);
void fxt_trigger_remove(void);
void fxt_trigger_thread(struct slot_info *info);

#endif
