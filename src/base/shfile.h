/* shfile.h - the layout of a session's files in its buffers directory (docs/recovery.md), the
 * one place both sides agree on it: the library writes these files while it traces
 * (buffers.c, slots.c, consumer.c, intern.c, registry.c), `fxtrace recover` reads them after
 * the process died (src/formats/recover*.c). Version FXT_SH_VERSION.
 *
 *   DIR/<pid>.<n>/session   this header, the slot table, the ingress ring, the consumer's held
 *                           signal-context records, the string and tracepoint tables
 *   DIR/<pid>.<n>/buffers   the slot pool: slot i at i * stride (struct fxt_tslot header
 *                           page(s) with the thread's writer and its companion, then the ring)
 *
 * Every field has an explicit size and offset; integers are little-endian (fxtrace writes its
 * files only on little-endian hosts: buffers.c refuses others). Nothing is a pointer: places
 * are byte offsets in the file named. The reader never uses the C structs below: it reads each
 * field at the offset the FXT_SH_* constants give, which the static assertions tie to them.
 *
 * Writers, per field group (in the traced process; the reader is another process, later):
 *   immutable part      the starting thread, before the session is active (then checksummed)
 *   slot table entry    owner fields: the attaching thread under pool_lock (FREE -> LIVE);
 *                       state: as session_int.h; consumer fields: the consumer thread only
 *   intent, committed, held, latest clock sync: the consumer thread only
 *   output identity     the starting thread, before the consumer thread exists
 *   stdout position     the consumer thread only (intent_out_pos, intent_first, intent_last)
 *   no_slot_drops       any thread (relaxed fetch-and-add)
 *   string table        the thread that interns a string (intern.c), any context
 *   tracepoint log      under the registry lock
 * None of these is read back by another thread of the process except where noted at the
 * field: in-process synchronization stays in the private structures (session_int.h). The
 * file is read after death, when every store the process executed is in the page cache.
 */
#ifndef FXT_BASE_SHFILE_H
#define FXT_BASE_SHFILE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define FXT_SH_MAGIC 0x3153534554585846ull /* bytes "FXTSESS1" */
#define FXT_SH_VERSION 3u
#define FXT_SH_FILE "session"
#define FXT_SH_POOL_FILE "buffers"

/* session state (FXT_SH_STATE) */
#define FXT_SH_RUNNING 1u
#define FXT_SH_STOPPED 2u /* fxt_session_stop completed its last pass: nothing to recover */

/* intent state (FXT_SH_INTENT_STATE) */
#define FXT_SH_IDLE 0u
#define FXT_SH_WRITING 1u /* the write of [file_off, file_off + len) may be under way */
#define FXT_SH_WRITTEN 2u /* it returned whole: its effects are being applied */
#define FXT_SH_NO_SLOT 0xffffffffu

/* slot state (FXT_SLOT_STATE): as enum slot_state of session_int.h */
#define FXT_SH_SLOT_FREE 0u
#define FXT_SH_SLOT_LIVE 1u
#define FXT_SH_SLOT_EXITED 2u

/* A string table entry (u64): text offset in the text area (bits 0..31), length (32..47), and
 * FXT_SH_STR_MARK in bits 48..63 once the text is complete. */
#define FXT_SH_STR_MARK 0x5a17u
#define FXT_SH_STR_ENTRIES 0x8000u /* one per string index 0..0x7fff */

/* A held record (consumer's signal-context records, popped from the ingress ring and not yet
 * written): u32 slot, u32 len, u32 ingress position it was popped from, u32 consumed_by (the
 * intent seq of the write that took it, 0 = none), then len bytes (whole FXT words). */
#define FXT_SH_HELD_HEADER 16u
#define FXT_SH_HELD_MAX 16u /* held records merged into one write at most */

/* A tracepoint log entry: u32 payload bytes, u32 reserved (0), then the payload of the
 * fxtrace:tracepoint blob (docs/fxt-conventions.md), zero padded to 8 bytes. */
#define FXT_SH_TP_HEADER 8u

struct fxt_sh {
  /* ---- immutable part: written once, before the session is active; checksummed -------- */
  uint64_t magic;              /*    0 FXT_SH_MAGIC */
  uint32_t version;            /*    8 FXT_SH_VERSION */
  uint32_t header_bytes;       /*   12 sizeof(struct fxt_sh) */
  uint32_t pid;                /*   16 */
  uint32_t mode;               /*   20 enum fxt_session_mode */
  uint64_t proc_start;         /*   24 the process's start time (/proc/PID/stat field 22) */
  uint64_t ticks_per_second;   /*   32 */
  uint32_t clock_tsc;          /*   40 1: TSC ticks, 0: CLOCK_MONOTONIC ns */
  uint32_t session_gen;        /*   44 epoch of the session's ingress records */
  uint64_t sync_ticks;         /*   48 clock sync taken at the start */
  uint64_t sync_mono_ns;       /*   56 */
  uint64_t sync_real_ns;       /*   64 */
  char process_name[64];       /*   72 NUL-terminated */
  char output[4096];           /*  136 absolute path of the output file; "" none, "-" stdout */
  /* the pool (file FXT_SH_POOL_FILE) */
  uint64_t pool_bytes;         /* 4232 nslots * stride */
  uint32_t nslots;             /* 4240 */
  uint32_t stride;             /* 4244 slot i is at i * stride */
  uint32_t ring_bytes;         /* 4248 ring storage of a slot, a power of two */
  uint32_t ring_storage_off;   /* 4252 offset of the ring storage in a slot */
  /* where the fields a reader needs are, from the start of a slot (and, for the companion
   * writer, from the start of the companion: the same struct) */
  uint32_t off_ring_size;      /* 4256 u32 */
  uint32_t off_ring_flags;     /* 4260 u32: 1 overwrite */
  uint32_t off_head;           /* 4264 u32 free-running position: end of committed records */
  uint32_t off_tail;           /* 4268 u32: start of the oldest unread record */
  uint32_t off_overrun_records;/* 4272 u32 free-running */
  uint32_t off_overrun_bytes;  /* 4276 u32 */
  uint32_t off_drop_first;     /* 4280 u64 pending drop run: first drop (ticks) */
  uint32_t off_drop_last;      /* 4284 u64 */
  uint32_t off_drop_records;   /* 4288 u64 (0: no run pending) */
  uint32_t off_drop_bytes;     /* 4292 u64 */
  uint32_t off_process_koid;   /* 4296 u64 */
  uint32_t off_thread_koid;    /* 4300 u64 */
  uint32_t off_depth;          /* 4304 u32 emission nesting depth of the owner thread */
  uint32_t off_thread_bits;    /* 4308 u64 thread ref << 24 (0: inline koids) */
  uint32_t off_lost;           /* 4312 u64 events lost outside the ring (fxt_tslot.lost) */
  uint32_t companion_off;      /* 4316 companion writer (signal context) from the slot start */
  uint32_t companion_storage_off; /* 4320 its ring storage, from the slot start */
  uint32_t companion_bytes;    /* 4324 its ring size */
  /* regions of this file: offset, bytes */
  uint64_t slots_off;          /* 4328 slot table: nslots entries of FXT_SH_SLOT_BYTES */
  uint64_t ingress_off;        /* 4336 struct fxt_ingress, its storage at +ingress_ctl_bytes */
  uint64_t ingress_bytes;      /* 4344 control block + storage */
  uint32_t ingress_ctl_bytes;  /* 4352 */
  uint32_t off_ingress_slots;  /* 4356 u32, in the control block */
  uint32_t off_ingress_payload;/* 4360 u32 */
  uint32_t off_ingress_stride; /* 4364 u32 */
  uint32_t off_ingress_ready_head; /* 4368 u32 */
  uint32_t held_half_bytes;    /* 4372 bytes of each half of the held area */
  uint64_t held_off;           /* 4376 two halves */
  uint64_t strings_off;        /* 4384 FXT_SH_STR_ENTRIES u64 entries, then the text */
  uint64_t strings_bytes;      /* 4392 */
  uint64_t tps_off;            /* 4400 tracepoint log */
  uint64_t tps_bytes;          /* 4408 */
  uint32_t checksum;           /* 4416 FNV-1a 32 of bytes [0, 4416) */
  uint32_t reserved0;          /* 4420 */

  /* ---- mutable part --------------------------------------------------------------------- */
  /* The consumer thread. */
  _Alignas(64) _Atomic uint32_t state; /* 4480 FXT_SH_RUNNING, FXT_SH_STOPPED */
  _Atomic uint32_t intent_state;     /* 4484 FXT_SH_IDLE / WRITING / WRITTEN */
  _Atomic uint32_t intent_seq;       /* 4488 bumped for every write; never 0 */
  _Atomic uint32_t intent_slot;      /* 4492 slot whose records the write holds, or NO_SLOT */
  _Atomic uint64_t intent_file_off;  /* 4496 where the write starts (= committed before it) */
  _Atomic uint64_t intent_len;       /* 4504 its bytes */
  _Atomic uint32_t intent_from;      /* 4512 ring positions [from, to) of the slot's records */
  _Atomic uint32_t intent_to;        /* 4516 */
  _Atomic uint32_t intent_consumed;  /* 4520 the slot's consumed as the write began */
  _Atomic uint32_t intent_rep_overrun_records; /* 4524 the slot's reported_* once written */
  _Atomic uint32_t intent_rep_overrun_bytes;   /* 4528 */
  _Atomic uint32_t intent_rep_lost_records;    /* 4532 */
  _Atomic uint32_t intent_rep_lost_bytes;      /* 4536 */
  _Atomic uint32_t held_active;      /* 4540 which half of the held area is current (0, 1) */
  _Atomic uint64_t intent_rep_nested;/* 4544 */
  _Atomic uint64_t committed;        /* 4552 output bytes written and applied */
  _Atomic uint64_t held_len[2];      /* 4560 bytes used in each half */
  _Atomic uint32_t sync_seq;         /* 4576 latest clock sync: odd while being written */
  uint32_t reserved1;                /* 4580 */
  _Atomic uint64_t latest_ticks;     /* 4584 */
  _Atomic uint64_t latest_mono_ns;   /* 4592 */
  _Atomic uint64_t latest_real_ns;   /* 4600 */
  /* Any thread. */
  _Alignas(64) _Atomic uint64_t no_slot_drops; /* 4608 events of threads that got no buffer */
  /* Under the registry lock. */
  _Alignas(64) _Atomic uint64_t tps_used; /* 4672 bytes of the tracepoint log */
  /* The consumer thread (rarely: the last pass). */
  _Atomic uint64_t rep_no_slot;        /* 4680 no_slot_drops reported in the output */
  _Atomic uint64_t intent_rep_no_slot; /* 4688 rep_no_slot once the intent's write is in */
  /* Overwrite mode: what a recovery needs to finish the consumer's last claim (deliver.c) when
   * it died after the write and before the claim's effects were stored. */
  _Atomic uint32_t intent_credit_records; /* 4696 the slot's credit_records before the claim */
  _Atomic uint32_t intent_credit_bytes;   /* 4700 */
  _Atomic uint64_t intent_chunk_off;      /* 4704 file offset of the slot's records in the
                                             write (after buffered metadata and losses) */
  _Atomic uint32_t intent_held_n;         /* 4712 held records merged among them */
  _Atomic uint32_t intent_held_off[FXT_SH_HELD_MAX]; /* 4716 their offsets from chunk_off */
  /* The starting thread, once, as the consumer opens the output file and before the file holds
   * anything of this session: its identity, 0 0 for none (no file, stdout not on a regular
   * file, or a death before the open). For a path, a harvest by another process writes into
   * the file the path names only when it is still this one (harvest.h); for stdout (`-`) on a
   * regular file, it is the file intent_out_pos below is in: a harvester whose own stdout is
   * that file reads the last write back from it (fxt_recover_check_stdout, recover.h). */
  _Atomic uint64_t out_dev;          /* 4784 st_dev */
  _Atomic uint64_t out_ino;          /* 4792 st_ino */
  /* The consumer thread, in commit() with the rest of the intent, before intent_state becomes
   * WRITING (the same compiler fences order them): where the write lands in a stdout that is a
   * regular file, which the process may share with others (a parent, its children: the file
   * offset moves under everyone's writes, so the file's length cannot tell the write in), and
   * the first and last 8 bytes it writes there, so that a harvester can see whether it did
   * land. Stored once as UINT64_MAX (not known) at the start for every other output, and for
   * a write whose position the consumer could not get. */
  _Alignas(64) _Atomic uint64_t intent_out_pos; /* 4800 the file offset the write starts at */
  _Atomic uint64_t intent_first;     /* 4808 its first 8 bytes, as a little-endian u64 */
  _Atomic uint64_t intent_last;      /* 4816 its last 8 bytes */
};

#define FXT_SH_HEADER_BYTES 4864u

/* The slot table entry of one slot. */
struct fxt_sh_slot {
  _Atomic uint32_t state;      /*  0 FXT_SH_SLOT_* */
  uint32_t owner_gen;          /*  4 bumped for each new owner */
  uint32_t tid;                /*  8 owner thread */
  uint32_t thread_ref;         /* 12 1..255, 0: inline koids */
  char comm[16];               /* 16 owner's name (NUL-terminated unless 16 bytes) */
  /* The consumer thread (reset by take_slot while the slot is FREE). */
  _Atomic uint32_t delivered;  /* 32 ring position: records before it are in the committed
                                  output (the write that took them was applied) */
  _Atomic uint32_t consumed;   /* 36 bytes the consumer moved the ring's tail over, mod 2^32:
                                  in overwrite mode tail == consumed + overrun_bytes */
  _Atomic uint32_t credit_records; /* 40 delivered records the producer then overwrote and
                                      counted in overrun_records (not lost: in the output) */
  _Atomic uint32_t credit_bytes;   /* 44 their bytes */
  _Atomic uint32_t rep_overrun_records; /* 48 overrun_records - credit reported in the output */
  _Atomic uint32_t rep_overrun_bytes;   /* 52 */
  _Atomic uint32_t rep_lost_records;    /* 56 ring lost_records reported */
  _Atomic uint32_t rep_lost_bytes;      /* 60 */
  _Atomic uint64_t rep_nested;          /* 64 fxt_tslot.lost reported */
  /* The producer (the owner thread; the consumer once it is gone): overwriting the oldest
   * records in overwrite mode (slots_emit.c, fxt_pass_oldest), stated before the tail moves, so
   * that a death between the move and the overrun counters' update leaves them countable. */
  _Atomic uint32_t pass_state;          /* 72 1 while a pass is under way */
  _Atomic uint32_t pass_from;           /* 76 the tail it moves from */
  _Atomic uint32_t pass_to;             /* 80 ... to */
  _Atomic uint32_t pass_records;        /* 84 event records in [from, to) */
  _Atomic uint32_t pass_ovr_before;     /* 88 overrun_records before it */
  _Atomic uint32_t pass_ovb_before;     /* 92 overrun_bytes before it */
  /* The CPU in effect at a ring position (cpunote.h: who writes which, the orders): two
   * notes of the producer's passes, then two of the consumer's claims; each is
   * (cpu << 32) | position, cpu FXT_CPU_NOTE_NONE when nothing is known. */
  _Atomic uint64_t cpu_note[2];         /* 96 the producer (fxt_pass_oldest) */
  _Atomic uint64_t cons_cpu_note[2];    /* 112 the consumer thread (drain_slot_to) */
};
#define FXT_SH_SLOT_BYTES 128u

/* Byte offsets the reader uses (and static assertions below tie to the structs). */
#define FXT_SH_OFF_MAGIC 0u
#define FXT_SH_OFF_VERSION 8u
#define FXT_SH_OFF_HEADER_BYTES 12u
#define FXT_SH_OFF_PID 16u
#define FXT_SH_OFF_MODE 20u
#define FXT_SH_OFF_PROC_START 24u
#define FXT_SH_OFF_TICKS_PER_SECOND 32u
#define FXT_SH_OFF_CLOCK_TSC 40u
#define FXT_SH_OFF_SESSION_GEN 44u
#define FXT_SH_OFF_SYNC_TICKS 48u
#define FXT_SH_OFF_SYNC_MONO 56u
#define FXT_SH_OFF_SYNC_REAL 64u
#define FXT_SH_OFF_PROCESS_NAME 72u
#define FXT_SH_OFF_OUTPUT 136u
#define FXT_SH_OFF_POOL_BYTES 4232u
#define FXT_SH_OFF_NSLOTS 4240u
#define FXT_SH_OFF_STRIDE 4244u
#define FXT_SH_OFF_RING_BYTES 4248u
#define FXT_SH_OFF_RING_STORAGE 4252u
#define FXT_SH_OFF_LAYOUT 4256u /* 15 u32 field offsets, in the order of the struct */
#define FXT_SH_OFF_COMPANION 4316u
#define FXT_SH_OFF_COMPANION_STORAGE 4320u
#define FXT_SH_OFF_COMPANION_BYTES 4324u
#define FXT_SH_OFF_SLOTS 4328u
#define FXT_SH_OFF_INGRESS 4336u
#define FXT_SH_OFF_INGRESS_BYTES 4344u
#define FXT_SH_OFF_INGRESS_CTL_BYTES 4352u
#define FXT_SH_OFF_INGRESS_LAYOUT 4356u /* 4 u32: slots, payload, stride, ready_head */
#define FXT_SH_OFF_HELD_HALF 4372u
#define FXT_SH_OFF_HELD 4376u
#define FXT_SH_OFF_STRINGS 4384u
#define FXT_SH_OFF_STRINGS_BYTES 4392u
#define FXT_SH_OFF_TPS 4400u
#define FXT_SH_OFF_TPS_BYTES 4408u
#define FXT_SH_OFF_CHECKSUM 4416u
#define FXT_SH_OFF_STATE 4480u
#define FXT_SH_OFF_INTENT_STATE 4484u
#define FXT_SH_OFF_INTENT_SEQ 4488u
#define FXT_SH_OFF_INTENT_SLOT 4492u
#define FXT_SH_OFF_INTENT_FILE_OFF 4496u
#define FXT_SH_OFF_INTENT_LEN 4504u
#define FXT_SH_OFF_INTENT_FROM 4512u
#define FXT_SH_OFF_INTENT_TO 4516u
#define FXT_SH_OFF_INTENT_CONSUMED 4520u
#define FXT_SH_OFF_INTENT_REP 4524u /* 4 u32: overrun records, bytes, lost records, bytes */
#define FXT_SH_OFF_HELD_ACTIVE 4540u
#define FXT_SH_OFF_INTENT_REP_NESTED 4544u
#define FXT_SH_OFF_COMMITTED 4552u
#define FXT_SH_OFF_HELD_LEN 4560u
#define FXT_SH_OFF_SYNC_SEQ 4576u
#define FXT_SH_OFF_LATEST_TICKS 4584u
#define FXT_SH_OFF_LATEST_MONO 4592u
#define FXT_SH_OFF_LATEST_REAL 4600u
#define FXT_SH_OFF_NO_SLOT_DROPS 4608u
#define FXT_SH_OFF_TPS_USED 4672u
#define FXT_SH_OFF_REP_NO_SLOT 4680u
#define FXT_SH_OFF_INTENT_REP_NO_SLOT 4688u
#define FXT_SH_OFF_INTENT_CREDIT 4696u /* 2 u32: records, bytes */
#define FXT_SH_OFF_INTENT_CHUNK_OFF 4704u
#define FXT_SH_OFF_INTENT_HELD_N 4712u
#define FXT_SH_OFF_INTENT_HELD_OFF 4716u
#define FXT_SH_OFF_OUT_DEV 4784u
#define FXT_SH_OFF_OUT_INO 4792u
#define FXT_SH_OFF_INTENT_OUT_POS 4800u
#define FXT_SH_OFF_INTENT_FIRST 4808u
#define FXT_SH_OFF_INTENT_LAST 4816u

#define FXT_SLOT_OFF_STATE 0u
#define FXT_SLOT_OFF_OWNER_GEN 4u
#define FXT_SLOT_OFF_TID 8u
#define FXT_SLOT_OFF_THREAD_REF 12u
#define FXT_SLOT_OFF_COMM 16u
#define FXT_SLOT_OFF_DELIVERED 32u
#define FXT_SLOT_OFF_CONSUMED 36u
#define FXT_SLOT_OFF_CREDIT_RECORDS 40u
#define FXT_SLOT_OFF_CREDIT_BYTES 44u
#define FXT_SLOT_OFF_REP 48u /* 4 u32: overrun records, bytes, lost records, bytes */
#define FXT_SLOT_OFF_REP_NESTED 64u
#define FXT_SLOT_OFF_PASS 72u /* 6 u32: state, from, to, records, overrun records, bytes */
#define FXT_SLOT_OFF_CPU_NOTES 96u /* 4 u64: the producer's two, the consumer's two */

#define FXT_SH_CHECK(f, off) _Static_assert(offsetof(struct fxt_sh, f) == (off), #f)
FXT_SH_CHECK(magic, FXT_SH_OFF_MAGIC);
FXT_SH_CHECK(version, FXT_SH_OFF_VERSION);
FXT_SH_CHECK(header_bytes, FXT_SH_OFF_HEADER_BYTES);
FXT_SH_CHECK(pid, FXT_SH_OFF_PID);
FXT_SH_CHECK(mode, FXT_SH_OFF_MODE);
FXT_SH_CHECK(proc_start, FXT_SH_OFF_PROC_START);
FXT_SH_CHECK(ticks_per_second, FXT_SH_OFF_TICKS_PER_SECOND);
FXT_SH_CHECK(clock_tsc, FXT_SH_OFF_CLOCK_TSC);
FXT_SH_CHECK(session_gen, FXT_SH_OFF_SESSION_GEN);
FXT_SH_CHECK(sync_ticks, FXT_SH_OFF_SYNC_TICKS);
FXT_SH_CHECK(sync_mono_ns, FXT_SH_OFF_SYNC_MONO);
FXT_SH_CHECK(sync_real_ns, FXT_SH_OFF_SYNC_REAL);
FXT_SH_CHECK(process_name, FXT_SH_OFF_PROCESS_NAME);
FXT_SH_CHECK(output, FXT_SH_OFF_OUTPUT);
FXT_SH_CHECK(pool_bytes, FXT_SH_OFF_POOL_BYTES);
FXT_SH_CHECK(nslots, FXT_SH_OFF_NSLOTS);
FXT_SH_CHECK(stride, FXT_SH_OFF_STRIDE);
FXT_SH_CHECK(ring_bytes, FXT_SH_OFF_RING_BYTES);
FXT_SH_CHECK(ring_storage_off, FXT_SH_OFF_RING_STORAGE);
FXT_SH_CHECK(off_ring_size, FXT_SH_OFF_LAYOUT);
FXT_SH_CHECK(off_lost, FXT_SH_OFF_LAYOUT + 14 * 4);
FXT_SH_CHECK(companion_off, FXT_SH_OFF_COMPANION);
FXT_SH_CHECK(companion_storage_off, FXT_SH_OFF_COMPANION_STORAGE);
FXT_SH_CHECK(companion_bytes, FXT_SH_OFF_COMPANION_BYTES);
FXT_SH_CHECK(slots_off, FXT_SH_OFF_SLOTS);
FXT_SH_CHECK(ingress_off, FXT_SH_OFF_INGRESS);
FXT_SH_CHECK(ingress_bytes, FXT_SH_OFF_INGRESS_BYTES);
FXT_SH_CHECK(ingress_ctl_bytes, FXT_SH_OFF_INGRESS_CTL_BYTES);
FXT_SH_CHECK(off_ingress_slots, FXT_SH_OFF_INGRESS_LAYOUT);
FXT_SH_CHECK(off_ingress_ready_head, FXT_SH_OFF_INGRESS_LAYOUT + 12);
FXT_SH_CHECK(held_half_bytes, FXT_SH_OFF_HELD_HALF);
FXT_SH_CHECK(held_off, FXT_SH_OFF_HELD);
FXT_SH_CHECK(strings_off, FXT_SH_OFF_STRINGS);
FXT_SH_CHECK(strings_bytes, FXT_SH_OFF_STRINGS_BYTES);
FXT_SH_CHECK(tps_off, FXT_SH_OFF_TPS);
FXT_SH_CHECK(tps_bytes, FXT_SH_OFF_TPS_BYTES);
FXT_SH_CHECK(checksum, FXT_SH_OFF_CHECKSUM);
FXT_SH_CHECK(state, FXT_SH_OFF_STATE);
FXT_SH_CHECK(intent_state, FXT_SH_OFF_INTENT_STATE);
FXT_SH_CHECK(intent_seq, FXT_SH_OFF_INTENT_SEQ);
FXT_SH_CHECK(intent_slot, FXT_SH_OFF_INTENT_SLOT);
FXT_SH_CHECK(intent_file_off, FXT_SH_OFF_INTENT_FILE_OFF);
FXT_SH_CHECK(intent_len, FXT_SH_OFF_INTENT_LEN);
FXT_SH_CHECK(intent_from, FXT_SH_OFF_INTENT_FROM);
FXT_SH_CHECK(intent_to, FXT_SH_OFF_INTENT_TO);
FXT_SH_CHECK(intent_consumed, FXT_SH_OFF_INTENT_CONSUMED);
FXT_SH_CHECK(intent_rep_overrun_records, FXT_SH_OFF_INTENT_REP);
FXT_SH_CHECK(intent_rep_lost_bytes, FXT_SH_OFF_INTENT_REP + 12);
FXT_SH_CHECK(held_active, FXT_SH_OFF_HELD_ACTIVE);
FXT_SH_CHECK(intent_rep_nested, FXT_SH_OFF_INTENT_REP_NESTED);
FXT_SH_CHECK(committed, FXT_SH_OFF_COMMITTED);
FXT_SH_CHECK(held_len, FXT_SH_OFF_HELD_LEN);
FXT_SH_CHECK(sync_seq, FXT_SH_OFF_SYNC_SEQ);
FXT_SH_CHECK(latest_ticks, FXT_SH_OFF_LATEST_TICKS);
FXT_SH_CHECK(latest_mono_ns, FXT_SH_OFF_LATEST_MONO);
FXT_SH_CHECK(latest_real_ns, FXT_SH_OFF_LATEST_REAL);
FXT_SH_CHECK(no_slot_drops, FXT_SH_OFF_NO_SLOT_DROPS);
FXT_SH_CHECK(tps_used, FXT_SH_OFF_TPS_USED);
FXT_SH_CHECK(rep_no_slot, FXT_SH_OFF_REP_NO_SLOT);
FXT_SH_CHECK(intent_rep_no_slot, FXT_SH_OFF_INTENT_REP_NO_SLOT);
FXT_SH_CHECK(intent_credit_records, FXT_SH_OFF_INTENT_CREDIT);
FXT_SH_CHECK(intent_credit_bytes, FXT_SH_OFF_INTENT_CREDIT + 4);
FXT_SH_CHECK(intent_chunk_off, FXT_SH_OFF_INTENT_CHUNK_OFF);
FXT_SH_CHECK(intent_held_n, FXT_SH_OFF_INTENT_HELD_N);
FXT_SH_CHECK(intent_held_off, FXT_SH_OFF_INTENT_HELD_OFF);
FXT_SH_CHECK(out_dev, FXT_SH_OFF_OUT_DEV);
FXT_SH_CHECK(out_ino, FXT_SH_OFF_OUT_INO);
FXT_SH_CHECK(intent_out_pos, FXT_SH_OFF_INTENT_OUT_POS);
FXT_SH_CHECK(intent_first, FXT_SH_OFF_INTENT_FIRST);
FXT_SH_CHECK(intent_last, FXT_SH_OFF_INTENT_LAST);
_Static_assert(sizeof(struct fxt_sh) == FXT_SH_HEADER_BYTES, "header size");
#undef FXT_SH_CHECK

#define FXT_SLOT_CHECK(f, off) _Static_assert(offsetof(struct fxt_sh_slot, f) == (off), #f)
FXT_SLOT_CHECK(state, FXT_SLOT_OFF_STATE);
FXT_SLOT_CHECK(owner_gen, FXT_SLOT_OFF_OWNER_GEN);
FXT_SLOT_CHECK(tid, FXT_SLOT_OFF_TID);
FXT_SLOT_CHECK(thread_ref, FXT_SLOT_OFF_THREAD_REF);
FXT_SLOT_CHECK(comm, FXT_SLOT_OFF_COMM);
FXT_SLOT_CHECK(delivered, FXT_SLOT_OFF_DELIVERED);
FXT_SLOT_CHECK(consumed, FXT_SLOT_OFF_CONSUMED);
FXT_SLOT_CHECK(credit_records, FXT_SLOT_OFF_CREDIT_RECORDS);
FXT_SLOT_CHECK(credit_bytes, FXT_SLOT_OFF_CREDIT_BYTES);
FXT_SLOT_CHECK(rep_overrun_records, FXT_SLOT_OFF_REP);
FXT_SLOT_CHECK(rep_nested, FXT_SLOT_OFF_REP_NESTED);
FXT_SLOT_CHECK(pass_state, FXT_SLOT_OFF_PASS);
FXT_SLOT_CHECK(pass_ovb_before, FXT_SLOT_OFF_PASS + 20);
FXT_SLOT_CHECK(cpu_note, FXT_SLOT_OFF_CPU_NOTES);
FXT_SLOT_CHECK(cons_cpu_note, FXT_SLOT_OFF_CPU_NOTES + 16);
_Static_assert(sizeof(struct fxt_sh_slot) == FXT_SH_SLOT_BYTES, "slot entry size");
#undef FXT_SLOT_CHECK

/* FNV-1a over n bytes: the header's checksum. */
static inline uint32_t fxt_sh_fnv(const void *p, size_t n)
{
  const unsigned char *b = (const unsigned char *)p;
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 16777619u;
  return h;
}

#endif
