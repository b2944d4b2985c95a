/* list_prog.c - a program with one event of each kind and a typed tracepoint of every field
 * type, for `fxtrace list` (list_events.sh), built as a PIE and as a non-PIE executable. It
 * fires nothing unless given an argument; it exits at once. */
#include <fxtrace/fxtrace.h>

FXT_TRACEPOINT(lp, all_types, "u8=%u u16=%u u32=%u u64=%llu s8=%d s16=%d s32=%d s64=%lld",
               (u8, a), (u16, b), (u32, c), (u64, d), (s8, e), (s16, f), (s32, g), (s64, h));
FXT_TRACEPOINT(lp, more, NULL, (bool, flag), (f64, ratio), (ptr, where), (str, who, 24),
               (bytes, key, 6));
FXT_TRACEPOINT(lp, one, "x=%u", (u32, x));

int main(int argc, char **argv)
{
  (void)argv;
  if (argc > 1) {
    const unsigned char key[6] = {1, 2, 3, 4, 5, 6};
    FXT_TRACE(lp, all_types, 1, 2, 3, 4, -1, -2, -3, -4);
    FXT_TRACE(lp, more, 1, 0.5, (void *)argv, "me", key);
    FXT_TRACE(lp, one, 7);
    FXT_INSTANT("lp", "instant", FXT_U64("n", 1));
    FXT_COUNTER("lp", "gauge", 0, FXT_U64("depth", 3));
    FXT_SCOPE("lp", "scope");
    FXT_PRINTK("list_prog %d", argc);
  }
  return 0;
}
