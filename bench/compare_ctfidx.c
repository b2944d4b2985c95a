/* compare_ctfidx - sums LTTng's CTF packet index files (the .idx files of a trace's index/
 * directories) for bench/compare:
 *
 *   compare_ctfidx FILE.idx...
 *
 * prints packets= (packets written), content_bytes= (their content, packet headers included)
 * and discarded= (events the tracer discarded: the packet context's events_discarded is a
 * running count per stream, so the largest value of each file, summed).
 *
 * Index file layout (CTF index 1.x as LTTng writes it, every field big-endian): a header
 * { u32 magic 0xC1F1DCC1, u32 major, u32 minor, u32 entry_len } then entries of entry_len
 * bytes starting { u64 offset, u64 packet_size (bits), u64 content_size (bits),
 * u64 timestamp_begin, u64 timestamp_end, u64 events_discarded, u64 stream_id, ... }.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t be(const unsigned char *p, int n)
{
  uint64_t v = 0;
  for (int i = 0; i < n; i++)
    v = v << 8 | p[i];
  return v;
}

int main(int argc, char **argv)
{
  uint64_t packets = 0, content_bits = 0, discarded = 0;
  for (int a = 1; a < argc; a++) {
    FILE *f = fopen(argv[a], "rb");
    unsigned char hdr[16], e[256];
    if (!f || fread(hdr, 1, 16, f) != 16 || be(hdr, 4) != 0xC1F1DCC1u) {
      fprintf(stderr, "compare_ctfidx: %s: not a CTF index file\n", argv[a]);
      return 1;
    }
    uint64_t len = be(hdr + 12, 4), most = 0;
    if (len < 56 || len > sizeof(e)) {
      fprintf(stderr, "compare_ctfidx: %s: entry length %llu\n", argv[a],
              (unsigned long long)len);
      return 1;
    }
    while (fread(e, 1, len, f) == len) {
      packets++;
      content_bits += be(e + 16, 8);
      uint64_t d = be(e + 40, 8);
      most = d > most ? d : most;
    }
    discarded += most;
    fclose(f);
  }
  printf("packets=%llu\ncontent_bytes=%llu\ndiscarded=%llu\n", (unsigned long long)packets,
         (unsigned long long)(content_bits / 8), (unsigned long long)discarded);
  return 0;
}
