/* fxtrace/detail/pp.h - preprocessor helpers of fxtrace/fxtrace.h.
 *
 * NOT API: not for direct use; may change in any release.
 *
 * FXT_PP_MAP(M, a0, a1, ...) expands to M(0, a0) M(1, a1) ...: up to 15 items, FXT's
 * argument limit, which is what bounds this table. */
#ifndef FXTRACE_DETAIL_PP_H
#define FXTRACE_DETAIL_PP_H

#define FXT_PP_CAT(a, b) FXT_PP_CAT_(a, b)
#define FXT_PP_CAT_(a, b) a##b
#define FXT_PP_EXPAND(...) __VA_ARGS__
#define FXT_PP_FIRST(...) FXT_PP_FIRST_(__VA_ARGS__, ~)
#define FXT_PP_FIRST_(a, ...) a
#define FXT_PP_NARGS(...) \
  FXT_PP_NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define FXT_PP_NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, \
                      n, ...)                                                               \
  n
#define FXT_PP_MAP(M, ...) FXT_PP_CAT(FXT_PP_MAP_, FXT_PP_NARGS(__VA_ARGS__))(M, __VA_ARGS__)
#define FXT_PP_MAP_1(M, a0) M(0, a0)
#define FXT_PP_MAP_2(M, a0, a1) FXT_PP_MAP_1(M, a0) M(1, a1)
#define FXT_PP_MAP_3(M, a0, a1, a2) FXT_PP_MAP_2(M, a0, a1) M(2, a2)
#define FXT_PP_MAP_4(M, a0, a1, a2, a3) FXT_PP_MAP_3(M, a0, a1, a2) M(3, a3)
#define FXT_PP_MAP_5(M, a0, a1, a2, a3, a4) FXT_PP_MAP_4(M, a0, a1, a2, a3) M(4, a4)
#define FXT_PP_MAP_6(M, a0, a1, a2, a3, a4, a5) FXT_PP_MAP_5(M, a0, a1, a2, a3, a4) M(5, a5)
#define FXT_PP_MAP_7(M, a0, a1, a2, a3, a4, a5, a6) FXT_PP_MAP_6(M, a0, a1, a2, a3, a4, a5) M(6, a6)
#define FXT_PP_MAP_8(M, a0, a1, a2, a3, a4, a5, a6, a7) FXT_PP_MAP_7(M, a0, a1, a2, a3, a4, a5, a6) M(7, a7)
#define FXT_PP_MAP_9(M, a0, a1, a2, a3, a4, a5, a6, a7, a8) FXT_PP_MAP_8(M, a0, a1, a2, a3, a4, a5, a6, a7) M(8, a8)
#define FXT_PP_MAP_10(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9) FXT_PP_MAP_9(M, a0, a1, a2, a3, a4, a5, a6, a7, a8) M(9, a9)
#define FXT_PP_MAP_11(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10) FXT_PP_MAP_10(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9) M(10, a10)
#define FXT_PP_MAP_12(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11) FXT_PP_MAP_11(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10) M(11, a11)
#define FXT_PP_MAP_13(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12) FXT_PP_MAP_12(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11) M(12, a12)
#define FXT_PP_MAP_14(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13) FXT_PP_MAP_13(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12) M(13, a13)
#define FXT_PP_MAP_15(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14) FXT_PP_MAP_14(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13) M(14, a14)
#define FXT_PP_MAP_16(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15) FXT_PP_MAP_15(M, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14) M(15, a15)

#endif /* FXTRACE_DETAIL_PP_H */
