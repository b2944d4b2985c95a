/* recover_model.c - a dead session's files read into recovery's model (recover_int.h): the
 * header, the consumer's last intent resolved, each buffer's undelivered records and the
 * losses still to report, the string and tracepoint tables. docs/recovery.md explains the
 * rules; shfile.h is the layout, and recover_header.c reads its header. Every number read from
 * a file is checked before it is used.
 */
#define _GNU_SOURCE
#include <fxtrace/errors.h>
#include <fxtrace/fxt.h>
#include <fxtrace/meta.h>
#include <fxtrace/ring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/cpunote.h"
#include "../base/grow.h"
#include "../base/namefix.h"
#include "recover_int.h"

/* ---- reading ---------------------------------------------------------------------------- */

bool rec_is_meta(uint64_t h)
{
  return (h & 0xf) == FXT_RECORD_EVENT && (h >> 32 & 0xffff) == FXT_STR_KERNEL_META;
}

/* A loss count no process reaches (2^48 events): the counter is damaged. Counts are written
 * as records of at most 2^32 - 1 each, so this also bounds the records recovery writes. */
#define REC_MAX_COUNT (1ull << 48)

static uint64_t capped(struct rec_model *m, uint64_t n, const char *file, uint64_t off);

static bool has(const struct fxt_rec_file *f, uint64_t off, uint64_t n)
{
  return off <= f->size && n <= f->size - off;
}

static uint32_t u32_at(const struct fxt_rec_file *f, uint64_t off)
{
  return has(f, off, 4) ? rec_le32(f->data + off) : 0;
}

static uint64_t capped(struct rec_model *m, uint64_t n, const char *file, uint64_t off)
{
  if (n <= REC_MAX_COUNT)
    return n;
  rec_say(m, 1, "%s: offset %llu: a loss count of %llu is not plausible (damaged): taken as 0",
          file, (unsigned long long)off, (unsigned long long)n);
  return 0;
}

/* Adds a record: p is where it will be read from (for ring and companion records an offset in
 * the slot's copy until the walk is done), bytes where it is now, in_file where it begins in
 * the mapped input (for reports). */
static bool list_add(struct rec_list *l, const unsigned char *p, const unsigned char *bytes,
                     const unsigned char *in_file, uint32_t len, uint8_t src)
{
  if (!fxt_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v), 64))
    return false;
  uint64_t ts = 0, hd = len >= 8 ? rec_le64(bytes) : 0;
  if (len >= 16 && (hd & 0xf) == FXT_RECORD_EVENT) /* as consumer.c's ts_of */
    ts = (hd >> 16 & 0xf) == FXT_EVENT_DURATION_COMPLETE && len >= 24 ? rec_le64(bytes + len - 8)
                                                                       : rec_le64(bytes + 8);
  l->v[l->n] = (struct rec_record){p, in_file, len, src, (uint32_t)l->n, ts};
  l->n++;
  return true;
}

/* The consumer's last write: was it whole in the output? Then what it changes counts. */
static void resolve_intent(struct rec_model *m)
{
  struct rec_hdr *h = &m->h;
  const struct fxt_rec_file *o = &m->in->output;
  m->committed = h->committed;
  m->intent_written = h->intent_state == FXT_SH_WRITTEN;
  if (h->intent_state == FXT_SH_WRITING && o->size == 0 && strcmp(h->output, "-") == 0) {
    /* Died inside a write to stdout, whose bytes a recovery neither reads nor cuts: whether
     * the write is in it is what a harvester whose stdout is the same regular file found
     * there (fxt_recover_check_stdout). Whole, it counts as a whole write to a file does;
     * not there, its records are taken from the buffers; not known, or cut, they are taken
     * all the same, and whatever of it is in stdout is there twice (said when it held a
     * slot's records or losses: strings, threads and clock syncs are written again anyway). */
    enum fxt_rec_landed v = m->in->stdout_write;
    m->intent_written = v == FXT_REC_LANDED_YES;
    bool counts = h->intent_slot != FXT_SH_NO_SLOT || h->intent_rep_no_slot != h->rep_no_slot;
    if ((v == FXT_REC_LANDED_UNKNOWN || v == FXT_REC_LANDED_TORN) && counts && h->intent_len) {
      m->stats->maybe_twice = h->intent_len;
      rec_say(m, 0, "stdout: process %u died inside a write of %llu bytes to it, which %s: "
                    "its records are taken from the buffers, and what of it is in stdout may "
                    "be counted twice",
              h->pid, (unsigned long long)h->intent_len,
              v == FXT_REC_LANDED_TORN ? "is cut short there (or overwritten)"
                                       : "this process cannot read back");
    }
    m->committed = h->intent_file_off;
  } else if (h->intent_state == FXT_SH_WRITING) {
    /* Died around the write: whole in the file, it counts; torn or absent, nothing of it
     * does (what it held is still in the buffers and the held area). */
    m->intent_written = o->size > 0 && h->intent_file_off <= o->size &&
                        h->intent_len <= o->size - h->intent_file_off;
    if (!m->intent_written && o->size > h->intent_file_off)
      rec_say(m, 0, "%s: offset %llu: the consumer's last write (%llu of %llu bytes) was torn "
                    "by the death: dropped, its records are taken from the buffers",
              o->name, (unsigned long long)h->intent_file_off,
              (unsigned long long)(o->size - h->intent_file_off),
              (unsigned long long)h->intent_len);
    m->committed = h->intent_file_off;
  }
  if (m->intent_written) {
    m->committed = h->intent_file_off + h->intent_len;
    h->rep_no_slot = h->intent_rep_no_slot;
  }
}

/* ---- strings and tracepoints -------------------------------------------------------------- */

static void read_strings(struct rec_model *m)
{
  const struct fxt_rec_file *f = &m->in->session;
  const struct rec_hdr *h = &m->h;
  uint64_t entries = (uint64_t)FXT_SH_STR_ENTRIES * 8;
  if (!has(f, h->strings_off, entries) || h->strings_bytes < entries) {
    rec_say(m, 1, "%s: offset %llu: the string table is missing (file truncated)", f->name,
            (unsigned long long)h->strings_off);
    return;
  }
  uint64_t text = h->strings_off + entries, cap = h->strings_bytes - entries;
  uint32_t bad = 0, first_bad = 0;
  for (uint32_t i = 1; i < FXT_SH_STR_ENTRIES; i++) {
    uint64_t e = rec_le64(f->data + h->strings_off + 8 * (uint64_t)i);
    if (e == 0)
      continue;
    uint64_t off = e & 0xffffffffu, len = e >> 32 & 0xffff;
    if (e >> 48 != FXT_SH_STR_MARK || len == 0 || len > 0x7fff || off + len > cap ||
        !has(f, text + off, len)) {
      if (!bad++)
        first_bad = i;
      continue;
    }
    m->str[i] = f->data + text + off;
    m->str_len[i] = (uint16_t)len;
  }
  if (bad)
    rec_say(m, 1, "%s: offset %llu: %u string table entries are damaged (first: index %u); "
                  "records that use them are dropped",
            f->name, (unsigned long long)(h->strings_off + 8 * (uint64_t)first_bad), bad,
            first_bad);
}

static void read_tracepoints(struct rec_model *m)
{
  const struct fxt_rec_file *f = &m->in->session;
  const struct rec_hdr *h = &m->h;
  uint64_t used = h->tps_used;
  if (used > h->tps_bytes || !has(f, h->tps_off, used)) {
    rec_say(m, 1, "%s: offset %llu: the tracepoint table says %llu bytes, beyond its region "
                  "or the file: read as far as it goes",
            f->name, (unsigned long long)h->tps_off, (unsigned long long)used);
    used = h->tps_bytes;
    if (!has(f, h->tps_off, used))
      used = f->size > h->tps_off ? f->size - h->tps_off : 0;
  }
  for (uint64_t at = 0; at + FXT_SH_TP_HEADER <= used;) {
    const unsigned char *e = f->data + h->tps_off + at;
    uint32_t len = rec_le32(e);
    uint64_t need = FXT_SH_TP_HEADER + (((uint64_t)len + 7) & ~(uint64_t)7);
    if (len < 16 || len > 8192 || need > used - at) {
      rec_say(m, 1, "%s: offset %llu: damaged tracepoint description (%u bytes): the rest "
                    "of the table is skipped",
              f->name, (unsigned long long)(h->tps_off + at), len);
      break;
    }
    uint32_t id = rec_le32(e + FXT_SH_TP_HEADER);
    if (id != 0 && id < 65536) {
      m->tp[id] = e + FXT_SH_TP_HEADER;
      m->tp_len[id] = len;
    }
    at += need;
  }
}

/* ---- one slot --------------------------------------------------------------------------- */

struct ringview {
  const unsigned char *storage; /* in the pool file */
  uint32_t size;
};

static uint64_t ring_word(const struct ringview *r, uint32_t pos)
{
  return rec_le64(r->storage + (pos & (r->size - 1)));
}

/* Copies the record at pos (n bytes, possibly wrapping) into the slot's copy buffer; returns
 * a pointer to it (stable once the walk is done: offsets are fixed up after growth). */
static bool copy_record(struct rec_slot *s, const struct ringview *r, uint32_t pos, uint32_t n,
                        size_t *at)
{
  if (!fxt_grow((void **)&s->copy, &s->copy_cap, s->copy_len + n, 1, 64))
    return false;
  uint32_t off = pos & (r->size - 1), first = r->size - off;
  if (first >= n) {
    memcpy(s->copy + s->copy_len, r->storage + off, n);
  } else {
    memcpy(s->copy + s->copy_len, r->storage + off, first);
    memcpy(s->copy + s->copy_len + first, r->storage, n - first);
  }
  *at = s->copy_len;
  s->copy_len += n;
  return true;
}

/* Walks whole records from pos to end; returns the position reached (== end when clean). */
static uint32_t walk(const struct ringview *r, uint32_t pos, uint32_t end)
{
  while (pos != end) {
    uint32_t n = fxt_ring_record_bytes(ring_word(r, pos));
    if (n == 0 || n > end - pos)
      break;
    pos += n;
  }
  return pos;
}

/* Takes the records [pos, end) of ring r into list l (offsets into s->copy for now). */
static uint32_t take(struct rec_model *m, struct rec_slot *s, const struct ringview *r,
                     uint32_t pos, uint32_t end, uint8_t src, struct rec_list *l)
{
  while (pos != end) {
    uint32_t n = fxt_ring_record_bytes(ring_word(r, pos));
    if (n == 0 || n > end - pos)
      break;
    size_t at = 0;
    if (m->summary) { /* count only */
      m->stats->records++;
    } else if (!copy_record(s, r, pos, n, &at) ||
               !list_add(l, (const unsigned char *)(uintptr_t)at, s->copy + at,
                         r->storage + (pos & (r->size - 1)), n, src)) {
      break;
    }
    pos += n;
  }
  return pos;
}

/* Event records among the ring records of the consumer's last write, up to ring position
 * upto: counted in the output file, where that write is whole (overwrite mode's credit:
 * deliver.c). Returns false when the file does not have them as the intent says. */
static bool count_written(struct rec_model *m, uint32_t upto, uint32_t *records)
{
  const struct rec_hdr *h = &m->h;
  const struct fxt_rec_file *o = &m->in->output;
  uint64_t at = h->intent_chunk_off, end = h->intent_file_off + h->intent_len;
  uint32_t pos = h->intent_from, k = 0, held_n = h->intent_held_n;
  /* The write's bytes: in the output file, or (stdout) as read back from it, where file
   * offset x is at x - intent_file_off. */
  const unsigned char *w = o->data;
  uint64_t base = 0;
  if (o->size == 0 && m->in->stdout_bytes.size == h->intent_len) {
    o = &m->in->stdout_bytes;
    w = o->data;
    base = h->intent_file_off;
  }
  *records = 0;
  if (held_n > FXT_SH_HELD_MAX || at > end || at < base || end < base ||
      !has(o, at - base, end - at))
    return false;
  while (pos != upto) {
    if (end - at < 8)
      return false;
    uint64_t hd = rec_le64(w + (at - base));
    uint32_t n = fxt_ring_record_bytes(hd);
    if (n == 0 || n > end - at)
      return false;
    if (k < held_n && at - h->intent_chunk_off == h->intent_held_off[k]) {
      k++; /* a signal-context record merged in: not the ring's */
    } else {
      if (n > upto - pos)
        return false;
      *records += !rec_is_meta(hd);
      pos += n;
    }
    at += n;
  }
  return true;
}

static void read_slot(struct rec_model *m, uint32_t i, struct rec_slot *s)
{
  const struct rec_hdr *h = &m->h;
  const struct fxt_rec_file *sf = &m->in->session, *pf = &m->in->pool;
  uint64_t eoff = h->slots_off + (uint64_t)i * FXT_SH_SLOT_BYTES;
  memset(s, 0, sizeof(*s));
  s->index = i;
  if (!has(sf, eoff, FXT_SH_SLOT_BYTES)) {
    rec_say(m, 1, "%s: offset %llu: the slot table ends before slot %u (file truncated)",
            sf->name, (unsigned long long)eoff, i);
    return;
  }
  const unsigned char *e = sf->data + eoff;
  s->state = rec_le32(e + FXT_SLOT_OFF_STATE);
  if (s->state == FXT_SH_SLOT_FREE)
    return;
  s->tid = rec_le32(e + FXT_SLOT_OFF_TID);
  s->ref = rec_le32(e + FXT_SLOT_OFF_THREAD_REF);
  memcpy(s->comm, e + FXT_SLOT_OFF_COMM, 16);
  s->comm[16] = 0;
  fxt_name_fix(s->comm, sizeof(s->comm)); /* well-formed UTF-8 (a file of an older version) */
  if (s->state > FXT_SH_SLOT_EXITED || s->ref > 255 || s->tid == 0) {
    rec_say(m, 1, "%s: offset %llu: slot %u's entry is damaged (state %u, thread %u, ref %u): "
                  "slot skipped",
            sf->name, (unsigned long long)eoff, i, s->state, s->tid, s->ref);
    return;
  }
  uint64_t so = (uint64_t)i * h->stride;
  if (!has(pf, so, h->stride)) {
    rec_say(m, 1, "%s: offset %llu: the file ends before slot %u (thread %u) ends "
                  "(truncated): its records are lost",
            pf->name, (unsigned long long)pf->size, i, s->tid);
    return;
  }
  const unsigned char *sb = pf->data + so;
#define F32(f) rec_le32(sb + h->lay[f])
#define F64(f) rec_le64(sb + h->lay[f])
  uint32_t size = F32(RF_SIZE), flags = F32(RF_FLAGS), head = F32(RF_HEAD), tail = F32(RF_TAIL);
  uint32_t ovr = F32(RF_OVR), ovb = F32(RF_OVB);
  s->pkoid = F64(RF_PKOID);
  s->tkoid = F64(RF_TKOID);
  s->depth = F32(RF_DEPTH);
  s->drop_first = F64(RF_DFIRST);
  s->drop_last = F64(RF_DLAST);
  s->drop_records = F64(RF_DREC);
  s->drop_bytes = F64(RF_DBYTES);
  uint64_t lost = F64(RF_LOST);
  uint64_t tbits = F64(RF_TBITS);
  if (size != h->ring_bytes || flags > 1 || head - tail > size || tbits >> 24 != s->ref ||
      s->tkoid != s->tid || s->pkoid != h->pid || s->drop_records > REC_MAX_COUNT ||
      s->drop_bytes > REC_MAX_COUNT) {
    rec_say(m, 1, "%s: offset %llu: slot %u (thread %u) is damaged (ring size %u, flags %u, "
                  "head %u, tail %u, thread %llu): its records are lost",
            pf->name, (unsigned long long)so, i, s->tid, size, flags, head, tail,
            (unsigned long long)s->tkoid);
    s->drop_records = s->drop_bytes = 0;
    return;
  }
  uint32_t delivered = rec_le32(e + FXT_SLOT_OFF_DELIVERED);
  uint32_t consumed = rec_le32(e + FXT_SLOT_OFF_CONSUMED);
  uint32_t credit_r = rec_le32(e + FXT_SLOT_OFF_CREDIT_RECORDS);
  uint32_t credit_b = rec_le32(e + FXT_SLOT_OFF_CREDIT_BYTES);
  uint32_t rep[4];
  for (int k = 0; k < 4; k++)
    rep[k] = rec_le32(e + FXT_SLOT_OFF_REP + 4 * (unsigned)k);
  uint64_t rep_nested = rec_le64(e + FXT_SLOT_OFF_REP_NESTED);
  struct ringview r = {sb + h->ring_storage_off, size};

  /* The consumer's last write, when it was this slot's and is whole in the output. */
  bool mine = m->intent_written && h->intent_slot == i;
  uint32_t from = h->intent_from, to = h->intent_to, L = to - from;
  if (mine) {
    if (L)
      delivered = to;
    memcpy(rep, h->intent_rep, sizeof(rep));
    rep_nested = h->intent_rep_nested;
  }
  uint32_t u_records = 0, u_bytes = 0; /* passed by the producer, not counted */
  if (flags) {
    /* Overwrite mode. tail == consumed + overrun bytes + what a producer's pass moved and
     * did not count yet (docs/recovery.md): X is what the last claim and the last pass moved
     * that the stored counts do not say. */
    const unsigned char *ps = e + FXT_SLOT_OFF_PASS;
    uint32_t pb = 0, pass_to = rec_le32(ps + 8);
    if (rec_le32(ps) == 1 && ovb == rec_le32(ps + 20))
      pb = pass_to - rec_le32(ps + 4); /* a pass whose bytes are not counted (yet) */
    uint32_t K = mine && L ? h->intent_consumed : consumed;
    uint32_t X = tail - K - ovb, b = 0, a = 0;
    /* Did that pass move the tail? Then the tail was pass_to, and only the consumer can have
     * moved it since (the producer is still in the pass): to the end of its claim. */
    if (pb && tail == pass_to)
      b = pb;
    else if (pb && mine && L && tail == to && X - pb <= X && to - (X - pb) == pass_to)
      b = pb; /* the pass, then the consumer's claim from where the pass left the tail */
    else if (pb && !(mine && L) && X == pb)
      b = pb; /* the pass, then claims the consumer recorded */
    a = X - b;
    bool ok = mine && L ? a == 0 || (a <= L && (int32_t)(tail - to) >= 0) : a == 0;
    if (!ok) {
      rec_say(m, 1, "%s: offset %llu: slot %u (thread %u): ring positions inconsistent "
                    "(tail %u, consumed %u, overrun bytes %u): counts may be off",
              pf->name, (unsigned long long)(so + h->lay[RF_TAIL]), i, s->tid, tail, K, ovb);
      a = 0;
    }
    if (b) {
      u_bytes = b;
      u_records = ovr == rec_le32(ps + 16) ? rec_le32(ps + 12) : 0;
    }
    if (mine && L) {
      /* The staged records before c were passed (counted or not): they are in the output,
       * so they are credited, not reported as overrun. */
      uint32_t c = a ? to - a : tail - from <= L ? tail : to;
      uint32_t cr = 0;
      if (!m->summary && !count_written(m, c, &cr))
        rec_say(m, 1, "%s: the consumer's last write does not hold slot %u's records as its "
                      "intent says: the overrun count of thread %u may be off",
                m->in->output.name, i, s->tid);
      credit_r = h->intent_credit[0] + cr;
      credit_b = h->intent_credit[1] + (c - from);
    }
  }
  /* The undelivered records start at the later of delivered and tail. */
  uint32_t intact = tail;
  uint32_t start = (int32_t)(delivered - intact) >= 0 ? delivered : intact;
  if (head - start > size) {
    rec_say(m, 1, "%s: offset %llu: slot %u (thread %u): delivered position %u is past the "
                  "head %u: nothing taken from its buffer",
            pf->name, (unsigned long long)(so + h->lay[RF_HEAD]), i, s->tid, delivered, head);
    start = head;
  }
  uint32_t at = walk(&r, intact, start);
  if (at != start) {
    rec_say(m, 1, "%s: offset %llu: slot %u (thread %u): no record boundary at the delivered "
                  "position %u: the buffer is damaged before it",
            pf->name, (unsigned long long)(so + h->ring_storage_off + (at & (size - 1))), i,
            s->tid, start);
    start = head;
  }
  /* The CPU at start: the records before it were passed or delivered, and the `cpu` record
   * among them with them. A note for start is there whoever moved the tail there (its note
   * is stored before the move, cpunote.h); none for a delivered position the tail did not
   * reach, whose `cpu` record is in the output. */
  uint64_t notes[4];
  for (int k = 0; k < 4; k++)
    notes[k] = rec_le64(e + FXT_SLOT_OFF_CPU_NOTES + 8 * (unsigned)k);
  s->start_cpu = fxt_cpu_note_match(notes, start);
  uint32_t end = take(m, s, &r, start, head, SRC_RING, &s->ring);
  if (end != head) {
    rec_say(m, 1, "%s: offset %llu: slot %u (thread %u): invalid record header 0x%016llx at "
                  "ring position %u: the %u bytes after it are lost",
            pf->name, (unsigned long long)(so + h->ring_storage_off + (end & (size - 1))), i,
            s->tid, (unsigned long long)ring_word(&r, end), end, head - end);
    s->lost_records++; /* at least one record; the bytes are not records we can count */
  }
  /* A thread inside an emission at death: its reservation at head was not committed. */
  if (s->depth != 0) {
    s->uncommitted = true;
    uint64_t w = ring_word(&r, head);
    uint32_t n = fxt_ring_record_bytes(w);
    if (n && n <= size - (head - start) && (w & 0xf) == FXT_RECORD_EVENT)
      s->uncommitted_bytes = n;
  }
  /* Overrun the output does not report yet: what the producer counted, less what had been
   * delivered (credit), less what the output says. */
  uint32_t orec = ovr + u_records - credit_r - rep[0];
  uint32_t obytes = ovb + u_bytes - credit_b - rep[1];
  s->overrun_records = (int32_t)orec > 0 ? orec : 0;
  s->overrun_bytes = (int32_t)obytes > 0 ? obytes : 0;
  /* The companion writer (signal context): its records are read once the ingress ring and
   * the held area are (read_companions); its drops are the thread's losses. */
  const unsigned char *cb = sb + h->companion_off;
  uint32_t csize = rec_le32(cb + h->lay[RF_SIZE]), chead = rec_le32(cb + h->lay[RF_HEAD]);
  uint32_t ctail = rec_le32(cb + h->lay[RF_TAIL]);
  uint64_t cdrops = rec_le64(cb + h->lay[RF_DREC]);
  if (csize == h->companion_bytes && chead - ctail <= csize && cdrops < (1ull << 32)) {
    s->companion = sb;
    lost += cdrops;
  } else if (csize != 0) {
    rec_say(m, 1, "%s: offset %llu: slot %u's signal-context buffer is damaged: skipped",
            pf->name, (unsigned long long)(so + h->companion_off), i);
  }
  if (lost > rep_nested)
    s->lost_records += capped(m, lost - rep_nested, pf->name, so + h->lay[RF_LOST]);
#undef F32
#undef F64
  s->usable = true;
}

/* ---- signal-context records: held area and ingress ring ------------------------------------ */

/* Whether a held record taken by the write with intent seq `by` is in the output. */
static bool held_delivered(const struct rec_model *m, uint32_t by)
{
  if (by == 0)
    return false;
  int32_t ahead = (int32_t)(by - m->h.intent_seq);
  if (ahead > 0)
    return false; /* marked for a write whose intent was never stored */
  return ahead < 0 || m->intent_written || m->h.intent_state == FXT_SH_IDLE;
}

static struct rec_slot *slot_of(struct rec_model *m, uint32_t tag)
{
  return tag < m->h.nslots && m->slots[tag].usable ? &m->slots[tag] : NULL;
}

static void read_held(struct rec_model *m, uint32_t *skip_qpos, bool *skip)
{
  const struct fxt_rec_file *f = &m->in->session;
  const struct rec_hdr *h = &m->h;
  *skip = false;
  if (h->held_active > 1 || h->held_len[h->held_active] > h->held_half_bytes) {
    rec_say(m, 1, "%s: offset %u: the held area's header is damaged: its records are lost",
            f->name, FXT_SH_OFF_HELD_ACTIVE);
    return;
  }
  uint64_t base = h->held_off + (uint64_t)h->held_active * h->held_half_bytes;
  uint64_t used = h->held_len[h->held_active];
  if (!has(f, base, used)) {
    rec_say(m, 1, "%s: offset %llu: the held area is cut short (file truncated)", f->name,
            (unsigned long long)base);
    return;
  }
  uint32_t head = u32_at(f, h->ingress_off + h->ing_head_off);
  for (uint64_t at = 0; at + FXT_SH_HELD_HEADER <= used;) {
    const unsigned char *e = f->data + base + at;
    uint32_t tag = rec_le32(e), len = rec_le32(e + 4), qpos = rec_le32(e + 8);
    uint32_t by = rec_le32(e + 12);
    if (len % 8 || len > used - at - FXT_SH_HELD_HEADER ||
        (len && fxt_ring_record_bytes(rec_le64(e + FXT_SH_HELD_HEADER)) != len)) {
      rec_say(m, 1, "%s: offset %llu: damaged held record: the rest of the held area is lost",
              f->name, (unsigned long long)(base + at));
      return;
    }
    if (qpos == head) {
      *skip = true; /* popped into here, but the ring's head did not move yet */
      *skip_qpos = qpos;
    }
    struct rec_slot *s = slot_of(m, tag);
    if (s && len) {
      const unsigned char *rec = e + FXT_SH_HELD_HEADER;
      list_add(&s->seen, rec, rec, rec, len, SRC_HELD);
      if (held_delivered(m, by))
        ;
      else if (m->summary)
        m->stats->records++;
      else
        list_add(&s->extra, rec, rec, rec, len, SRC_HELD);
    }
    at += FXT_SH_HELD_HEADER + len;
  }
}

static void read_ingress(struct rec_model *m, bool skip, uint32_t skip_qpos)
{
  const struct fxt_rec_file *f = &m->in->session;
  const struct rec_hdr *h = &m->h;
  uint64_t ctl = h->ingress_off, st = ctl + h->ingress_ctl_bytes;
  if (!has(f, ctl, h->ingress_ctl_bytes) || h->ingress_ctl_bytes < 64 ||
      h->ing_slots_off + 4 > h->ingress_ctl_bytes || h->ing_head_off + 4 > h->ingress_ctl_bytes ||
      h->ing_payload_off + 4 > h->ingress_ctl_bytes || h->ing_stride_off + 4 > h->ingress_ctl_bytes) {
    rec_say(m, 1, "%s: offset %llu: the ingress ring is missing: signal-context records "
                  "pending in it are lost",
            f->name, (unsigned long long)ctl);
    return;
  }
  uint32_t n = u32_at(f, ctl + h->ing_slots_off), payload = u32_at(f, ctl + h->ing_payload_off);
  uint32_t stride = u32_at(f, ctl + h->ing_stride_off), head = u32_at(f, ctl + h->ing_head_off);
  uint64_t need = (uint64_t)n * (8 + (uint64_t)stride);
  if (n == 0 || (n & (n - 1)) || n > 65536 || payload == 0 || payload > 65536 ||
      stride != 16 + ((payload + 7) & ~7u) || need > h->ingress_bytes - h->ingress_ctl_bytes ||
      !has(f, st, need)) {
    rec_say(m, 1, "%s: offset %llu: the ingress ring's control block is damaged: "
                  "signal-context records pending in it are lost",
            f->name, (unsigned long long)ctl);
    return;
  }
  const unsigned char *cells = f->data + st, *slots = cells + 8 * (uint64_t)n;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t pos = head + k, c = rec_le32(cells + 4 * (pos & (n - 1)));
    uint32_t tag_pos = (pos & ~(n - 1)) << 1;
    if ((c & ~(n - 1)) != (tag_pos | n))
      break; /* not published: the end of the queue */
    const unsigned char *sh = slots + (uint64_t)(c & (n - 1)) * stride;
    uint32_t len = rec_le32(sh), epoch = rec_le32(sh + 4), tag = rec_le32(sh + 8);
    if (skip && pos == skip_qpos)
      continue; /* already in the held area */
    if (len > payload || len % 8 || epoch != h->session_gen) {
      if (epoch == h->session_gen)
        rec_say(m, 1, "%s: offset %llu: damaged ingress record: skipped", f->name,
                (unsigned long long)(sh - f->data));
      continue;
    }
    struct rec_slot *s = slot_of(m, tag);
    if (s && len && fxt_ring_record_bytes(rec_le64(sh + 16)) == len) {
      list_add(&s->seen, sh + 16, sh + 16, sh + 16, len, SRC_INGRESS);
      if (m->summary)
        m->stats->records++;
      else
        list_add(&s->extra, sh + 16, sh + 16, sh + 16, len, SRC_INGRESS);
    }
  }
}

/* Records still in a companion writer: not yet pushed, or pushed (into the ingress ring, then
 * perhaps the held area and the output) by a handler that died before it consumed them
 * (slots.c, fxt_emit_nested_done): those equal a record seen there and are skipped. */
static void read_companions(struct rec_model *m)
{
  const struct rec_hdr *h = &m->h;
  for (uint32_t i = 0; i < m->nslots; i++) {
    struct rec_slot *s = &m->slots[i];
    if (!s->usable || !s->companion)
      continue;
    const unsigned char *cb = s->companion + h->companion_off;
    struct ringview r = {s->companion + h->companion_storage_off, h->companion_bytes};
    uint32_t pos = rec_le32(cb + h->lay[RF_TAIL]), end = rec_le32(cb + h->lay[RF_HEAD]);
    while (pos != end) {
      uint32_t n = fxt_ring_record_bytes(ring_word(&r, pos));
      if (n == 0 || n > end - pos)
        break;
      size_t at = 0;
      if (!copy_record(s, &r, pos, n, &at))
        break;
      bool dup = false;
      for (size_t k = 0; k < s->seen.n && !dup; k++)
        dup = s->seen.v[k].len == n && memcmp(s->seen.v[k].p, s->copy + at, n) == 0;
      if (dup)
        s->copy_len -= n;
      else if (m->summary)
        m->stats->records++, s->copy_len -= n;
      else
        list_add(&s->extra, (const unsigned char *)(uintptr_t)at, s->copy + at,
                 r.storage + (pos & (r.size - 1)), n, SRC_COMPANION);
      pos += n;
    }
  }
}

/* ---- the model ---------------------------------------------------------------------------- */

static int by_time(const void *a, const void *b)
{
  const struct rec_record *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  if (x->src != y->src)
    return x->src < y->src ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order; /* a source's own order */
}

int rec_model_build(struct rec_model *m)
{
  int rc = rec_read_header(m);
  if (rc != 0)
    return rc;
  const struct rec_hdr *h = &m->h;
  resolve_intent(m);
  if (!m->summary) {
    m->str = calloc(FXT_SH_STR_ENTRIES, sizeof(*m->str));
    m->str_len = calloc(FXT_SH_STR_ENTRIES, sizeof(*m->str_len));
    m->tp = calloc(65536, sizeof(*m->tp));
    m->tp_len = calloc(65536, sizeof(*m->tp_len));
    if (!m->str || !m->str_len || !m->tp || !m->tp_len)
      return FXT_ENOMEM;
    read_strings(m);
    read_tracepoints(m);
  }
  if (m->in->pool.size == 0)
    rec_say(m, 1, "%s: missing: every thread's undelivered records are lost", m->in->pool.name);
  m->slots = calloc(h->nslots, sizeof(*m->slots));
  if (!m->slots)
    return FXT_ENOMEM;
  m->nslots = h->nslots;
  for (uint32_t i = 0; i < h->nslots; i++)
    read_slot(m, i, &m->slots[i]);
  uint32_t skip_qpos = 0;
  bool skip = false;
  read_held(m, &skip_qpos, &skip);
  read_ingress(m, skip, skip_qpos);
  read_companions(m);
  if (h->no_slot_drops > h->rep_no_slot)
    m->no_slot_lost = capped(m, h->no_slot_drops - h->rep_no_slot, m->in->session.name,
                             FXT_SH_OFF_NO_SLOT_DROPS);
  /* Records were taken as offsets into each slot's copy (it grew while they were): make them
   * pointers, and put the signal-context records in time order. */
  for (uint32_t i = 0; i < m->nslots && !m->summary; i++) {
    struct rec_slot *s = &m->slots[i];
    for (size_t k = 0; k < s->ring.n; k++)
      s->ring.v[k].p = s->copy + (uintptr_t)s->ring.v[k].p;
    for (size_t k = 0; k < s->extra.n; k++)
      if (s->extra.v[k].src == SRC_COMPANION)
        s->extra.v[k].p = s->copy + (uintptr_t)s->extra.v[k].p;
    if (s->extra.n > 1)
      qsort(s->extra.v, s->extra.n, sizeof(*s->extra.v), by_time);
  }
  return 0;
}

void rec_model_free(struct rec_model *m)
{
  for (uint32_t i = 0; m->slots && i < m->nslots; i++) {
    struct rec_slot *sl = &m->slots[i];
    FXT_FREE_ALL(sl->ring.v, sl->extra.v, sl->seen.v, sl->copy);
  }
  FXT_FREE_ALL(m->slots, m->str, m->str_len, m->tp, m->tp_len);
  memset(m, 0, sizeof(*m));
}
