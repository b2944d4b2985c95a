/* tpdesc.h - a tracepoint's description blob (the `tracepoint` blob record:
 * docs/fxt-conventions.md) laid out in one place: the registry writes it (fxt_tp_describe)
 * and the tests build theirs with it. Host byte order, as the registry has always written it.
 */
#ifndef FXT_BASE_TPDESC_H
#define FXT_BASE_TPDESC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Its first 16 bytes at p: the tracepoint's id, its system's and name's string indices, its
 * kind, its number of fields, the length of the format that follows, 0. Returns 16. */
static inline size_t fxt_tpdesc_head(unsigned char *p, uint32_t id, uint16_t sys, uint16_t name,
                                     uint16_t kind, uint16_t nfields, uint16_t fmt_len)
{
  uint16_t zero = 0;
  memcpy(p, &id, 4);
  memcpy(p + 4, &sys, 2);
  memcpy(p + 6, &name, 2);
  memcpy(p + 8, &kind, 2);
  memcpy(p + 10, &nfields, 2);
  memcpy(p + 12, &fmt_len, 2);
  memcpy(p + 14, &zero, 2);
  return 16;
}

/* A field's 8 bytes at p, after the format: its name's string index, its type, 0, its bound.
 * Returns 8. */
static inline size_t fxt_tpdesc_field(unsigned char *p, uint16_t ref, uint8_t type, uint32_t bound)
{
  memcpy(p, &ref, 2);
  p[2] = type;
  p[3] = 0;
  memcpy(p + 4, &bound, 4);
  return 8;
}

#endif /* FXT_BASE_TPDESC_H */
