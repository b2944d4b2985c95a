/* tests/unit/tdr_formats.h - kernel event format texts for the trace.dat tests, as Linux 6.18
 * prints them in events/<sys>/<event>/format (print fmt shortened). */
#ifndef FXTRACE_TESTS_TDR_FORMATS_H
#define FXTRACE_TESTS_TDR_FORMATS_H

#define FXT_TD_COMMON_FIELDS                                                                   \
  "format:\n"                                                                               \
  "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"                    \
  "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"                    \
  "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"            \
  "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

/* sched_switch: a 64-byte payload. */
#define FXT_TD_SCHED_SWITCH_FORMAT                                                             \
  "name: sched_switch\nID: 316\n" FXT_TD_COMMON_FIELDS                                         \
  "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"                           \
  "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"                               \
  "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"                                \
  "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"                              \
  "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"                          \
  "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"                               \
  "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"                              \
  "print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid\n"

/* sched_wakeup: 36 bytes used. */
#define FXT_TD_SCHED_WAKEUP_FORMAT                                                             \
  "name: sched_wakeup\nID: 374\n" FXT_TD_COMMON_FIELDS                                         \
  "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"                                \
  "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"                                    \
  "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"                                     \
  "\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n\n"                             \
  "print fmt: \"comm=%s pid=%d\", REC->comm, REC->pid\n"

#endif /* FXTRACE_TESTS_TDR_FORMATS_H */
