/* consumer_int.h - what the consumer's files share (consumer.c: the thread, its passes and
 * draining, its start and stop; consumer_out.c: the output and the records the consumer
 * writes itself, the commit protocol; consumer_held.c: signal-context records merged back into
 * their threads' streams; consumer_snap.c: requests served between passes, snapshots, a
 * flight recorder's `trace`). Everything here is the consumer thread's unless said. */
#ifndef FXTRACE_HOST_CONSUMER_INT_H
#define FXTRACE_HOST_CONSUMER_INT_H

#include <errno.h>
#include <fcntl.h>
#include <fxtrace/fxt.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "buffers.h"
#include "clock.h"
#include "consumer.h"
#include "../base/cpunote.h"
#include "deliver.h"
#include "intern.h"
#include "live.h"
#include "../base/metarec.h"
#include "outfile.h"
#include "registry.h"
#include "session_int.h"
#include "slots.h"

#define STAGE_BYTES (1u << 20)
#define OUT_BYTES (1u << 20)
/* Between passes when no producer wakes the consumer (one does at its wake mark, slots_attach.c
 * wake_mark): 100 ms, and such a pass takes from a buffer below its mark only what was there
 * at the previous one (drain_live), so a burst that fits in the buffers is written after it,
 * not while it takes every core (and an idle process wakes ten times a second); 10 ms while a
 * trace_pipe reader waits, and then every pass takes everything (`trace` flushes before it
 * reads). */
#define POLL_NS 100000000
#define POLL_LIVE_NS 10000000
#define SYNC_NS 1000000000 /* between the clock syncs of a file (pass) */
#define PROVIDER_NAME "fxtrace/1"
#define PREALLOC_AHEAD (16u << 20) /* output pages allocated ahead (consumer_out.c) */
#define PREALLOC_STEP (256u << 10) /* between two looks at the wake word: ~0.6 ms */
#define SECTION_BYTES 8u           /* a provider section record, before each write to stdout */


struct out {
  int fd;
  struct fxt_fd_id id; /* the file fd was opened on (outfile.h); 0s: not checked (a snapshot) */
  unsigned char *buf;
  size_t len;
  uint64_t written;  /* bytes handed to the file so far (incl. buffered) */
  uint64_t file_len; /* bytes the file holds (what write() took) */
  uint64_t limit;    /* event bytes allowed (max_file_kb), 0 = none */
  int error;         /* first write error (errno), reported at stop; nothing is written after
                        it (write_all), but one last small try at the end (write_failed_tail) */
  uint64_t failed_at; /* file_len when it failed: the file ends there (on a record boundary) */
  size_t kept_b;      /* of the failed write_all: bytes of its second part the file kept */
  bool torn;          /* the failed write left part of a record at the file's end (a shared
                         stdout, which is never cut back): nothing more is written after it */
  bool direct;       /* a snapshot's file: written as it is, outside the commit protocol */
  bool prealloc;          /* a regular file of ours: pages allocated ahead (out_prealloc) */
  uint64_t prealloc_end;  /* allocated up to here, past the end the file shows */
  bool shared_stdout;     /* stdout (`-`) on a regular file, which others may write too: each
                             write's place in it goes in the intent (stdout_place) */
  bool append;            /* ... opened O_APPEND: a write lands at the file's end */
  bool sections;          /* stdout (`-`): each write begins with a provider section record
                             (section_word), buf has the 8 bytes before it for one */
};

/* out.fd once the program closed the output and its path names another file (out_ours). */
#define OUT_LOST INT32_MAX

/* What a write changes once it is in the file (commit; the intent of shfile.h). */
struct effect {
  uint32_t slot;                  /* FXT_SH_NO_SLOT: no slot's records or losses */
  struct fxt_staged st;           /* the slot's ring records in it (st.len 0: none) */
  uint32_t rep[4];                /* the slot's reported overrun records, bytes, lost records,
                                     bytes after it */
  uint64_t rep_nested;
};

/* The consumer thread's state (consumer.c and the files beside it: the consumer thread
 * alone reads and writes it, but for the two counters fxt_session_counters loads). */
struct fxt_consumer_state {
  struct session *s;
  struct out out;
  unsigned char *stage;
  unsigned char *merged; /* stage + held records in time order */
  uint32_t seq;          /* intent seq of the next commit (held records it takes say so) */
  bool held_taken;       /* the next commit takes held records: compact after it */
  uint32_t held_n;       /* held records in the merged chunk, at these offsets */
  uint32_t held_off[FXT_SH_HELD_MAX];
  uint64_t no_slot_written; /* process-wide losses in the buffered records (last pass) */
  uint32_t strings_end; /* next string index to write */
  uint32_t registry_gen;
  uint8_t described[65536 / 8]; /* tracepoint ids with a description in the file */
  uint64_t last_comm_check;
  uint64_t last_sync_ns;   /* CLOCK_MONOTONIC of the last clock sync in the output */
  uint64_t capped_records; /* records not written because of max_file_kb */
  bool no_magic;           /* the output is appended to a trace: no magic record */
  uint64_t unwritten_records; /* records not written because the output failed (out.error) */
  _Atomic uint64_t nested_records; /* ingress records merged into their threads' streams */
  _Atomic uint64_t no_buffer_lost;
};
extern struct fxt_consumer_state fxt_cons;

/* FXTRACE_TEST_DIE_IN_WRITE (consumer_out.c): 1 before, 2 after the write; 0 off. */
extern int fxt_cons_die_in_write;
/* Callers of fxt_consumer_flush waiting now (consumer.c): the test hook above dies only in a
 * write made while one waits, the write a test asks for. */
extern _Atomic unsigned fxt_cons_flushers;

/* consumer_out.c */
uint64_t fxt_cons_records_in(const unsigned char *p, size_t len);
bool fxt_cons_out_prealloc(uint64_t ahead);
void fxt_cons_out_prealloc_release(void);
void fxt_cons_out_flush(void);
void fxt_cons_out_reserve(size_t n);
void fxt_cons_out_write(struct out *o, const void *p, size_t n);
void fxt_cons_write_metadata(void);
void fxt_cons_write_kobj_thread(struct session *s, const struct slot_info *info);
void fxt_cons_announce(struct session *s, uint32_t i);
void fxt_cons_refresh_names(struct session *s);
void fxt_cons_write_loss(struct session *s, uint32_t i, uint16_t name, uint64_t records,
                         uint64_t bytes, uint64_t ts);
uint32_t fxt_cons_encode_cpu(struct session *s, uint32_t i, uint32_t cpu, uint64_t ts,
                             uint64_t w[6]);
void fxt_cons_write_dropped(struct session *s, uint32_t i, uint64_t ts);
void fxt_cons_write_process_loss(struct session *s, uint64_t records);
void fxt_cons_write_clock_sync(struct session *s, bool first);
void fxt_cons_write_header(struct session *s, bool first);
void fxt_cons_commit(const unsigned char *chunk, size_t len, const struct effect *fx);

/* Encodes one record with an fxt_encode_* call into a word buffer and writes it. */
#define EMIT(fn, rec)                                                                        \
  do {                                                                                       \
    uint64_t buf_[512];                                                                      \
    int64_t n_ = fn(buf_, sizeof(buf_), rec);                                                \
    if (n_ > 0)                                                                              \
      fxt_cons_out_write(&fxt_cons.out, buf_, (size_t)n_);                                   \
  } while (0)

/* consumer_held.c */
void fxt_cons_pop_ingress(struct session *s);
void fxt_cons_held_compact(struct session *s);
uint64_t fxt_cons_ts_of(const unsigned char *rec, uint32_t len);
uint32_t fxt_cons_merge_held(uint32_t i, const unsigned char *stage, uint32_t len, bool all,
                             uint64_t safe_end, unsigned char **out, uint32_t *ring_used);

/* consumer_snap.c */
void fxt_cons_snap_serve(struct session *s);
void fxt_cons_view_serve(struct session *s);
/* A flight recorder's `trace` reader holds copies of the rings (acquire: pairs with the
 * release that made them DONE); the view's request state made idle (consumer start). */
bool fxt_cons_view_held(void);
void fxt_cons_view_reset(void);

/* consumer.c */
uint64_t fxt_cons_first_ts(const unsigned char *p, uint32_t len);
uint32_t fxt_cons_unreported(uint32_t count, uint32_t credit, uint32_t rep);
void fxt_cons_pass(struct session *s, bool timer);
void fxt_cons_write_failed_tail(struct session *s);

#endif /* FXTRACE_HOST_CONSUMER_INT_H */
