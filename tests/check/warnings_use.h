/* tests/check/warnings_use.h - every macro of fxtrace/fxtrace.h used once, in code that is
 * both C11 and C++17, for tests/check/warnings.sh: a warning in a macro's expansion is the
 * header's, as much as one in the header's own text. Included after every public header. */

FXT_TRACEPOINT(warn, all, "all the types", (u8, a_u8), (u16, a_u16), (u32, a_u32),
               (u64, a_u64), (s8, a_s8), (s16, a_s16), (s32, a_s32), (s64, a_s64),
               (bool, a_bool), (f64, a_f64), (ptr, a_ptr), (str, a_str, 5),
               (bytes, a_bytes, 3));
FXT_TRACEPOINT(warn, declared_only, NULL, (u32, x)); /* never fired in this unit */

int fxt_warnings_use(int n, const char *s, const unsigned char *bytes);
int fxt_warnings_use(int n, const char *s, const unsigned char *bytes)
{
  FXT_SCOPE("warn", "scope");
  if (FXT_TRACE_ENABLED(warn, all))
    FXT_TRACE(warn, all, (uint8_t)n, (uint16_t)n, (uint32_t)n, (uint64_t)n, (int8_t)n,
              (int16_t)n, n, (int64_t)n, n != 0, (double)n, s, s, bytes);
  FXT_INSTANT("warn", "instant", FXT_I32("i32", n), FXT_U32("u32", n), FXT_I64("i64", n),
              FXT_U64("u64", n), FXT_F64("f64", n), FXT_BOOL("bool", n), FXT_PTR("ptr", s),
              FXT_STR("str", s), FXT_ARG("arg_int", n), FXT_ARG("arg_str", s),
              FXT_ARG("arg_double", 0.5), FXT_ARG("arg_ptr", bytes));
  FXT_INSTANT("warn", "bare");
  FXT_BEGIN("warn", "dur");
  FXT_END("warn", "dur", FXT_U32("n", n));
  uint64_t start = fxt_now();
  FXT_COMPLETE("warn", "complete", start);
  FXT_COUNTER("warn", "counter", 1, FXT_U64("v", n));
  FXT_ASYNC_BEGIN("warn", "async", 7);
  FXT_ASYNC_INSTANT("warn", "async", 7, FXT_STR("at", s));
  FXT_ASYNC_END("warn", "async", 7);
  FXT_FLOW_BEGIN("warn", "flow", 8);
  FXT_FLOW_STEP("warn", "flow", 8);
  FXT_FLOW_END("warn", "flow", 8);
  FXT_PRINTK("%d from %s", n, s);
  FXT_PRINTK("no values");
  {
    FXT_SCOPE("warn", "a");
    FXT_SCOPE("warn", "b");
  }
  return n;
}
