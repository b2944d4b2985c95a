/* Built with -DFXT_DISABLE: every macro of fxtrace/fxtrace.h compiles away. The program must
 * reference no fxtrace symbol (tests/check/disabled.sh) and evaluate no argument (it exits 0
 * only if none was). Built as C, and as C++ through disabled.cpp. */
#include <fxtrace/fxtrace.h>

FXT_TRACEPOINT(off, ev, "x=%u", (u32, x));

int fxt_disabled_check(int v);
int fxt_disabled_check(int v)
{
  int evaluated = 0;
  FXT_TRACE(off, ev, (unsigned)(evaluated++));
  if (FXT_TRACE_ENABLED(off, ev))
    evaluated++;
  FXT_INSTANT("off", "i", FXT_U32("x", evaluated++));
  FXT_INSTANT("off", "j", FXT_I32("a", evaluated++), FXT_I64("b", evaluated++),
              FXT_U64("c", evaluated++), FXT_F64("d", evaluated++), FXT_BOOL("e", evaluated++),
              FXT_PTR("f", (void *)(uintptr_t)evaluated++),
              FXT_STR("g", evaluated++ ? "a" : "b"), FXT_ARG("h", evaluated++));
  FXT_BEGIN("off", "d");
  FXT_END("off", "d");
  {
    FXT_SCOPE("off", "s");
    FXT_SCOPE("off", "s2"); /* two scopes in one block */
  }
  uint64_t only_for_tracing = fxt_now(); /* must not warn as unused when disabled */
  FXT_COMPLETE("off", "c", only_for_tracing);
  FXT_COUNTER("off", "n", 1, FXT_U32("x", evaluated++));
  FXT_ASYNC_BEGIN("off", "a", 1);
  FXT_ASYNC_INSTANT("off", "a", 1);
  FXT_ASYNC_END("off", "a", 1);
  FXT_FLOW_BEGIN("off", "f", 1);
  FXT_FLOW_STEP("off", "f", 1);
  FXT_FLOW_END("off", "f", 1);
  FXT_PRINTK("%d", evaluated++);
  return v + evaluated; /* == v: nothing was evaluated */
}

int main(void)
{
  return fxt_disabled_check(0);
}
