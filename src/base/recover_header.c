/* src/base/recover_header.c - a session file's header read and checked (recover_header.h,
 * rec_read_header), with the little-endian reads and the reporting of damage the rest of
 * recovery uses. In the base, so in the tracer as well: finding dead sessions reads each one's
 * header (src/base/sdir.c, fxt_sdir_read); the recovery itself is not there.
 */
#define _GNU_SOURCE
#include <fxtrace/errors.h>
#include <fxtrace/ring.h>
#include <stdio.h>
#include <string.h>

#include "namefix.h"
#include "recover_header.h"

uint32_t rec_le32(const unsigned char *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t rec_le64(const unsigned char *p)
{
  return (uint64_t)rec_le32(p) | (uint64_t)rec_le32(p + 4) << 32;
}

static void say(struct rec_model *m, int damage, const char *fmt, va_list ap)
{
  char line[1024];
  vsnprintf(line, sizeof(line), fmt, ap);
  /* One line each: names from the session file (a thread's may hold a newline) and paths
   * keep no control character. */
  for (char *c = line; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f)
      *c = '?';
  if (damage)
    m->stats->damage++;
  if (m->report)
    m->report(m->report_ctx, damage, line);
}

void rec_say(struct rec_model *m, int damage, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  say(m, damage, fmt, ap);
  va_end(ap);
}

/* A header that cannot be read: reported as damage, FXT_EBADMSG. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int bad_header(struct rec_model *m, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  say(m, 1, fmt, ap);
  va_end(ap);
  return FXT_EBADMSG;
}

int rec_read_header(struct rec_model *m)
{
  const struct fxt_rec_file *f = &m->in->session;
  struct rec_hdr *h = &m->h;
  const char *n = f->name;
  if (f->size < FXT_SH_HEADER_BYTES)
    return bad_header(m, "%s: offset %llu: the file ends inside the %u-byte header", n,
                      (unsigned long long)f->size, FXT_SH_HEADER_BYTES);
  const unsigned char *d = f->data;
  if (rec_le64(d + FXT_SH_OFF_MAGIC) != FXT_SH_MAGIC)
    return bad_header(m, "%s: offset 0: not an fxtrace session file (bad magic)", n);
  h->version = rec_le32(d + FXT_SH_OFF_VERSION);
  if (h->version != FXT_SH_VERSION)
    return bad_header(m, "%s: offset %u: version %u (this fxtrace reads version %u)", n,
                      FXT_SH_OFF_VERSION, h->version, FXT_SH_VERSION);
  uint32_t sum = fxt_sh_fnv(d, FXT_SH_OFF_CHECKSUM);
  if (rec_le32(d + FXT_SH_OFF_CHECKSUM) != sum)
    return bad_header(m, "%s: offset 0..%u: header checksum mismatch: the header is damaged", n,
                      FXT_SH_OFF_CHECKSUM);
  h->pid = rec_le32(d + FXT_SH_OFF_PID);
  h->mode = rec_le32(d + FXT_SH_OFF_MODE);
  h->proc_start = rec_le64(d + FXT_SH_OFF_PROC_START);
  h->ticks_per_second = rec_le64(d + FXT_SH_OFF_TICKS_PER_SECOND);
  h->clock_tsc = rec_le32(d + FXT_SH_OFF_CLOCK_TSC);
  h->session_gen = rec_le32(d + FXT_SH_OFF_SESSION_GEN);
  h->sync[0] = rec_le64(d + FXT_SH_OFF_SYNC_TICKS);
  h->sync[1] = rec_le64(d + FXT_SH_OFF_SYNC_MONO);
  h->sync[2] = rec_le64(d + FXT_SH_OFF_SYNC_REAL);
  memcpy(h->process_name, d + FXT_SH_OFF_PROCESS_NAME, 64);
  h->process_name[64] = 0;
  fxt_name_fix(h->process_name, sizeof(h->process_name));
  memcpy(h->output, d + FXT_SH_OFF_OUTPUT, 4096);
  h->output[4096] = 0;
  h->pool_bytes = rec_le64(d + FXT_SH_OFF_POOL_BYTES);
  h->nslots = rec_le32(d + FXT_SH_OFF_NSLOTS);
  h->stride = rec_le32(d + FXT_SH_OFF_STRIDE);
  h->ring_bytes = rec_le32(d + FXT_SH_OFF_RING_BYTES);
  h->ring_storage_off = rec_le32(d + FXT_SH_OFF_RING_STORAGE);
  for (int i = 0; i < RF_COUNT; i++)
    h->lay[i] = rec_le32(d + FXT_SH_OFF_LAYOUT + 4 * (unsigned)i);
  h->companion_off = rec_le32(d + FXT_SH_OFF_COMPANION);
  h->companion_storage_off = rec_le32(d + FXT_SH_OFF_COMPANION_STORAGE);
  h->companion_bytes = rec_le32(d + FXT_SH_OFF_COMPANION_BYTES);
  h->slots_off = rec_le64(d + FXT_SH_OFF_SLOTS);
  h->ingress_off = rec_le64(d + FXT_SH_OFF_INGRESS);
  h->ingress_bytes = rec_le64(d + FXT_SH_OFF_INGRESS_BYTES);
  h->ingress_ctl_bytes = rec_le32(d + FXT_SH_OFF_INGRESS_CTL_BYTES);
  h->ing_slots_off = rec_le32(d + FXT_SH_OFF_INGRESS_LAYOUT);
  h->ing_payload_off = rec_le32(d + FXT_SH_OFF_INGRESS_LAYOUT + 4);
  h->ing_stride_off = rec_le32(d + FXT_SH_OFF_INGRESS_LAYOUT + 8);
  h->ing_head_off = rec_le32(d + FXT_SH_OFF_INGRESS_LAYOUT + 12);
  h->held_half_bytes = rec_le32(d + FXT_SH_OFF_HELD_HALF);
  h->held_off = rec_le64(d + FXT_SH_OFF_HELD);
  h->strings_off = rec_le64(d + FXT_SH_OFF_STRINGS);
  h->strings_bytes = rec_le64(d + FXT_SH_OFF_STRINGS_BYTES);
  h->tps_off = rec_le64(d + FXT_SH_OFF_TPS);
  h->tps_bytes = rec_le64(d + FXT_SH_OFF_TPS_BYTES);
  /* The immutable part is checksummed: what follows only catches a writer's bug. */
  bool pow2 = h->ring_bytes >= FXT_RING_MIN_SIZE && (h->ring_bytes & (h->ring_bytes - 1)) == 0;
  bool lay_ok = true;
  for (int i = 0; i < RF_COUNT; i++)
    lay_ok = lay_ok && h->lay[i] % 4 == 0 && h->lay[i] + 8 <= h->companion_off;
  if (!pow2 || h->nslots == 0 || h->ring_storage_off > h->stride ||
      h->stride - h->ring_storage_off != h->ring_bytes ||
      (uint64_t)h->nslots * h->stride != h->pool_bytes || !lay_ok ||
      h->companion_off * 2 > h->companion_storage_off ||
      (uint64_t)h->companion_storage_off + h->companion_bytes > h->ring_storage_off ||
      h->companion_bytes < FXT_RING_MIN_SIZE || (h->companion_bytes & (h->companion_bytes - 1)))
    return bad_header(m, "%s: offset %u: inconsistent buffer geometry", n, FXT_SH_OFF_POOL_BYTES);
  h->state = rec_le32(d + FXT_SH_OFF_STATE);
  h->intent_state = rec_le32(d + FXT_SH_OFF_INTENT_STATE);
  h->intent_seq = rec_le32(d + FXT_SH_OFF_INTENT_SEQ);
  h->intent_slot = rec_le32(d + FXT_SH_OFF_INTENT_SLOT);
  h->intent_file_off = rec_le64(d + FXT_SH_OFF_INTENT_FILE_OFF);
  h->intent_len = rec_le64(d + FXT_SH_OFF_INTENT_LEN);
  h->intent_from = rec_le32(d + FXT_SH_OFF_INTENT_FROM);
  h->intent_to = rec_le32(d + FXT_SH_OFF_INTENT_TO);
  h->intent_consumed = rec_le32(d + FXT_SH_OFF_INTENT_CONSUMED);
  for (int i = 0; i < 4; i++)
    h->intent_rep[i] = rec_le32(d + FXT_SH_OFF_INTENT_REP + 4 * (unsigned)i);
  h->held_active = rec_le32(d + FXT_SH_OFF_HELD_ACTIVE);
  h->intent_rep_nested = rec_le64(d + FXT_SH_OFF_INTENT_REP_NESTED);
  h->committed = rec_le64(d + FXT_SH_OFF_COMMITTED);
  h->held_len[0] = rec_le64(d + FXT_SH_OFF_HELD_LEN);
  h->held_len[1] = rec_le64(d + FXT_SH_OFF_HELD_LEN + 8);
  uint32_t seq = rec_le32(d + FXT_SH_OFF_SYNC_SEQ);
  h->latest[0] = rec_le64(d + FXT_SH_OFF_LATEST_TICKS);
  h->latest[1] = rec_le64(d + FXT_SH_OFF_LATEST_MONO);
  h->latest[2] = rec_le64(d + FXT_SH_OFF_LATEST_REAL);
  h->latest_ok = seq != 0 && seq % 2 == 0 && h->latest[0] >= h->sync[0] &&
                 h->latest[1] >= h->sync[1];
  h->no_slot_drops = rec_le64(d + FXT_SH_OFF_NO_SLOT_DROPS);
  h->tps_used = rec_le64(d + FXT_SH_OFF_TPS_USED);
  h->rep_no_slot = rec_le64(d + FXT_SH_OFF_REP_NO_SLOT);
  h->intent_rep_no_slot = rec_le64(d + FXT_SH_OFF_INTENT_REP_NO_SLOT);
  h->intent_credit[0] = rec_le32(d + FXT_SH_OFF_INTENT_CREDIT);
  h->intent_credit[1] = rec_le32(d + FXT_SH_OFF_INTENT_CREDIT + 4);
  h->intent_chunk_off = rec_le64(d + FXT_SH_OFF_INTENT_CHUNK_OFF);
  h->out_dev = rec_le64(d + FXT_SH_OFF_OUT_DEV);
  h->out_ino = rec_le64(d + FXT_SH_OFF_OUT_INO);
  h->intent_held_n = rec_le32(d + FXT_SH_OFF_INTENT_HELD_N);
  for (uint32_t i = 0; i < FXT_SH_HELD_MAX; i++)
    h->intent_held_off[i] = rec_le32(d + FXT_SH_OFF_INTENT_HELD_OFF + 4 * i);
  if (h->intent_state > FXT_SH_WRITTEN) {
    rec_say(m, 1, "%s: offset %u: intent state %u is not one of 0, 1, 2 (taken as 0)", n,
            FXT_SH_OFF_INTENT_STATE, h->intent_state);
    h->intent_state = FXT_SH_IDLE;
  }
  return 0;
}
