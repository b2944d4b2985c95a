/* work.c - what the pipeline actually computes: synthetic log records, CRC-32, word counts,
 * PackBits run-length coding and a byte-entropy estimate. No tracing here: the stages
 * trace around these calls, the way an application instruments code it calls into.
 */
#define _GNU_SOURCE
#include "demo.h"

#include <string.h>
#include <time.h>

/* CRC-32 (IEEE 802.3, reflected), sliced by 8: crc_table[k][b] is the CRC of byte b followed
 * by k zero bytes, so eight table lookups consume eight input bytes at once (as zlib does). */
static uint32_t crc_table[8][256];

void work_init(void)
{
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++)
      c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    crc_table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int k = 1; k < 8; k++)
      crc_table[k][i] = (crc_table[k - 1][i] >> 8) ^ crc_table[0][crc_table[k - 1][i] & 0xff];
}

uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: fast, and good enough to make text that is not trivially compressible. */
uint64_t rng_next(struct rng *r)
{
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 0x2545f4914f6cdd1dull;
}

uint32_t rng_below(struct rng *r, uint32_t n)
{
  return (uint32_t)((rng_next(r) >> 32) * n >> 32);
}

/* ---- synthetic records ------------------------------------------------------------------- */

#define RECORD_WIDTH 96 /* bytes per record, '\n' included: columns padded with spaces */

static const char *const levels[] = {"DEBUG", "INFO", "INFO", "INFO", "WARN", "ERROR"};
static const char *const components[] = {"scheduler", "net.rx", "net.tx", "storage",
                                         "cache",     "auth",   "http",   "db.pool"};
static const char *const vocabulary[] = {
    "request", "served",  "from",    "cache",  "miss",    "retry",  "timeout", "after",
    "client",  "closed",  "session", "token",  "expired", "queue",  "flushed", "bytes",
    "written", "to",      "disk",    "shard",  "replica", "lagging", "behind", "leader",
    "commit",  "applied", "index",   "rebuilt", "in",     "ms",     "ok",      "denied"};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Copies s at col of rec; returns the column after it. */
static uint32_t put_str(unsigned char *rec, uint32_t col, const char *s)
{
  size_t n = strlen(s);
  memcpy(rec + col, s, n);
  return col + (uint32_t)n;
}

/* One record: "0000001234 WARN  storage         word word ...      \n", or now and then a
 * separator line of one repeated character. Returns the words written. */
static uint32_t gen_record(struct rng *r, uint64_t number, unsigned char *rec)
{
  memset(rec, ' ', RECORD_WIDTH - 1);
  rec[RECORD_WIDTH - 1] = '\n';
  if (rng_below(r, 16) == 0) {
    memset(rec, "-=#"[rng_below(r, 3)], RECORD_WIDTH - 1);
    return 1;
  }
  for (int i = 9; i >= 0; i--, number /= 10) /* zero-padded record number */
    rec[i] = (unsigned char)('0' + number % 10);
  put_str(rec, 11, levels[rng_below(r, COUNT_OF(levels))]);
  put_str(rec, 17, components[rng_below(r, COUNT_OF(components))]);
  uint32_t words = 3, col = 33;
  for (uint32_t n = 3 + rng_below(r, 8); n > 0; n--) {
    const char *w = vocabulary[rng_below(r, COUNT_OF(vocabulary))];
    if (col + strlen(w) > RECORD_WIDTH - 1) /* the '\n' still separates the last word */
      break;
    col = put_str(rec, col, w) + 1;
    words++;
  }
  return words;
}

uint32_t gen_records(struct rng *r, uint64_t *record, unsigned char *buf, uint32_t len)
{
  uint32_t words = 0, pos = 0;
  for (; len - pos >= RECORD_WIDTH; pos += RECORD_WIDTH)
    words += gen_record(r, (*record)++, buf + pos);
  memset(buf + pos, ' ', len - pos); /* a partial record would split a word: pad instead */
  return words;
}

/* ---- checksums and counts ---------------------------------------------------------------- */

uint32_t count_words(const unsigned char *buf, uint32_t len)
{
  uint32_t words = 0;
  bool in_word = false;
  for (uint32_t i = 0; i < len; i++) {
    bool space = buf[i] == ' ' || buf[i] == '\n';
    words += !space && !in_word;
    in_word = !space;
  }
  return words;
}

static uint32_t load_le32(const unsigned char *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t crc32_ieee(const unsigned char *buf, uint32_t len)
{
  uint32_t(*t)[256] = crc_table;
  uint32_t c = 0xffffffffu, i = 0;
  for (; len - i >= 8; i += 8) {
    uint32_t lo = c ^ load_le32(buf + i), hi = load_le32(buf + i + 4);
    c = t[7][lo & 0xff] ^ t[6][lo >> 8 & 0xff] ^ t[5][lo >> 16 & 0xff] ^ t[4][lo >> 24] ^
        t[3][hi & 0xff] ^ t[2][hi >> 8 & 0xff] ^ t[1][hi >> 16 & 0xff] ^ t[0][hi >> 24];
  }
  for (; i < len; i++)
    c = t[0][(c ^ buf[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

/* ---- PackBits ------------------------------------------------------------------------------ */

uint32_t rle_bound(uint32_t n)
{
  return n + (n + 127) / 128; /* all literals: one control byte per 128 bytes */
}

uint32_t rle_pack(const unsigned char *src, uint32_t n, unsigned char *dst)
{
  uint32_t i = 0, o = 0;
  while (i < n) {
    uint32_t run = 1;
    while (i + run < n && run < 128 && src[i + run] == src[i])
      run++;
    if (run >= 3) { /* two bytes for 3..128: never longer than the input */
      dst[o++] = (unsigned char)(257 - run);
      dst[o++] = src[i];
      i += run;
      continue;
    }
    /* A literal lasts until a run of three starts (runs of two are cheaper left in it). */
    uint32_t start = i, lit = 0;
    while (i < n && lit < 128 && !(i + 2 < n && src[i] == src[i + 1] && src[i] == src[i + 2])) {
      i++;
      lit++;
    }
    dst[o++] = (unsigned char)(lit - 1);
    memcpy(dst + o, src + start, lit);
    o += lit;
  }
  return o;
}

int64_t rle_unpack(const unsigned char *src, uint32_t n, unsigned char *dst, uint32_t cap)
{
  uint32_t i = 0, o = 0;
  while (i < n) {
    unsigned c = src[i++];
    if (c < 128) {
      uint32_t lit = c + 1;
      if (lit > n - i || lit > cap - o)
        return -1;
      memcpy(dst + o, src + i, lit);
      i += lit;
      o += lit;
    } else if (c > 128) {
      uint32_t run = 257 - c;
      if (i == n || run > cap - o)
        return -1;
      memset(dst + o, src[i++], run);
      o += run;
    } /* 128 is a no-op in PackBits */
  }
  return o;
}

/* ---- entropy ----------------------------------------------------------------------------- */

/* log2(x) for x >= 1 without libm (the example target links only libfxtrace): the exponent by
 * halving, the mantissa m in [1, 2) by ln m = 2 atanh((m - 1) / (m + 1)), whose series
 * converges fast there (|z| <= 1/3). */
static double log2_of(double x)
{
  double e = 0;
  while (x >= 2) {
    x /= 2;
    e += 1;
  }
  double z = (x - 1) / (x + 1), z2 = z * z, term = z, sum = 0;
  for (int k = 1; k < 30; k += 2, term *= z2)
    sum += term / k;
  return e + 2 * sum / 0.69314718055994530942;
}

void byte_stats(const unsigned char *buf, uint32_t len, double *entropy, uint32_t *distinct)
{
  uint32_t hist[256] = {0};
  for (uint32_t i = 0; i < len; i++)
    hist[buf[i]]++;
  /* H = log2(len) - sum(c * log2 c) / len */
  double weighted = 0;
  uint32_t kinds = 0;
  for (int b = 0; b < 256; b++) {
    if (hist[b] != 0) {
      weighted += hist[b] * log2_of(hist[b]);
      kinds++;
    }
  }
  *entropy = len ? log2_of(len) - weighted / len : 0;
  *distinct = kinds;
}
