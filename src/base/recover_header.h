/* recover_header.h - recovery's model of a dead session (src/formats/recover_model.c builds
 * it from the files, src/formats/recover.c writes the trace from it) and the reader of a
 * session file's header (recover_header.c) that fills its first part: in src/base because the
 * tracer reads each dead session's header too (src/base/sdir.c, fxt_sdir_read); the rest of
 * recovery is in the formats library (src/formats/recover_int.h).
 */
#ifndef FXT_BASE_RECOVER_HEADER_H
#define FXT_BASE_RECOVER_HEADER_H

#include <stdarg.h>

#include "recover.h"
#include "shfile.h"

/* Fields of a slot (or its companion) the reader needs, in the order of the header's layout
 * table (shfile.h, FXT_SH_OFF_LAYOUT). */
enum rec_field {
  RF_SIZE, RF_FLAGS, RF_HEAD, RF_TAIL, RF_OVR, RF_OVB, RF_DFIRST, RF_DLAST, RF_DREC, RF_DBYTES,
  RF_PKOID, RF_TKOID, RF_DEPTH, RF_TBITS, RF_LOST, RF_COUNT
};

/* The session header, read and checked. */
struct rec_hdr {
  uint32_t version, pid, mode, clock_tsc, session_gen;
  uint64_t proc_start, ticks_per_second;
  uint64_t sync[3];   /* ticks, monotonic, realtime at the start */
  uint64_t latest[3]; /* the consumer's latest, when latest_ok */
  bool latest_ok;
  char process_name[65];
  char output[4097];
  uint64_t pool_bytes;
  uint32_t nslots, stride, ring_bytes, ring_storage_off;
  uint32_t lay[RF_COUNT];
  uint32_t companion_off, companion_storage_off, companion_bytes;
  uint64_t slots_off, ingress_off, ingress_bytes;
  uint32_t ingress_ctl_bytes, ing_slots_off, ing_payload_off, ing_stride_off, ing_head_off;
  uint32_t held_half_bytes;
  uint64_t held_off, strings_off, strings_bytes, tps_off, tps_bytes;
  /* mutable */
  uint32_t state, intent_state, intent_seq, intent_slot, intent_from, intent_to;
  uint32_t intent_consumed, intent_rep[4], intent_credit[2], intent_held_n;
  uint32_t intent_held_off[FXT_SH_HELD_MAX];
  uint64_t intent_file_off, intent_len, intent_rep_nested, intent_chunk_off;
  uint64_t committed, held_len[2], no_slot_drops, tps_used, rep_no_slot, intent_rep_no_slot;
  uint32_t held_active;
  uint64_t out_dev, out_ino; /* the output file's identity, 0 0 when none was opened */
};

/* A record to write: bytes (in the input files or in a slot's copy), its time, its source. */
enum rec_src { SRC_RING = 0, SRC_HELD = 1, SRC_INGRESS = 2, SRC_COMPANION = 3 };
struct rec_record {
  const unsigned char *p;
  const unsigned char *in_file; /* where its first byte lies in the mapped input */
  uint32_t len;
  uint8_t src;
  uint32_t order; /* place in the list it was taken into */
  uint64_t ts;
};

struct rec_list {
  struct rec_record *v;
  size_t n, cap;
};

/* One slot (a thread's buffer) as recovery found it. */
struct rec_slot {
  uint32_t index, state, tid, ref, depth;
  char comm[17];
  uint64_t pkoid, tkoid;
  /* to write */
  struct rec_list ring;   /* its ring's undelivered records, in order */
  struct rec_list extra;  /* signal-context records (held, ingress, companion), by time */
  struct rec_list seen;   /* every held and ingress record of the slot (delivered or not):
                             a companion record equal to one of them was pushed already */
  const unsigned char *companion; /* its companion writer's slot header, when readable */
  unsigned char *copy;    /* ring and companion records copied out (they may wrap) */
  size_t copy_len, copy_cap;
  uint64_t overrun_records, overrun_bytes, lost_records;
  uint64_t drop_records, drop_bytes, drop_first, drop_last; /* a pending drop run */
  uint32_t start_cpu;         /* the CPU in effect at its first ring record, as the slot's
                                 notes say (cpunote.h), or FXT_CPU_NOTE_NONE */
  uint32_t uncommitted_bytes; /* 0, or the size of a record being written at death */
  bool uncommitted;           /* inside an emission at death */
  bool usable;
};

struct rec_model {
  const struct fxt_rec_input *in;
  struct rec_hdr h;
  bool intent_written;   /* the intent's write is whole in the output */
  uint64_t committed;    /* output bytes to keep (before damage checks) */
  struct rec_slot *slots;
  uint32_t nslots;       /* slots with something to write, in slot order */
  /* strings: index -> text (in the session file) */
  const unsigned char **str;
  uint16_t *str_len;
  /* tracepoint descriptions: payloads in the session file, the last one of each id */
  const unsigned char **tp;
  uint32_t *tp_len;
  uint32_t ntp;
  uint64_t no_slot_lost;
  /* reporting */
  fxt_rec_report_fn report;
  void *report_ctx;
  struct fxt_rec_stats *stats;
  bool summary; /* counting only (the directory clean-up): no record copies kept */
};

/* Reads and checks the session header alone into m->h (m->in, m->report, m->stats set):
 * 0, or FXT_EBADMSG after reporting why. */
int rec_read_header(struct rec_model *m);
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void rec_say(struct rec_model *m, int damage, const char *fmt, ...);
uint64_t rec_le64(const unsigned char *p);
uint32_t rec_le32(const unsigned char *p);

#endif
