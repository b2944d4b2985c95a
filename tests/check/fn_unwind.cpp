// fn_unwind.cpp - a C++ program built with the function tracer's flags for fn_unwind.py: unwinding
// through traced functions, with the patchable-entry engine's redirected returns in the way.
//   fn_unwind throw   thrower(2) -> thrower(1) -> thrower(0) throws 7 through those 3 traced
//                     frames into the traced catcher(), called by main; the catch calls
//                     after_catch(7) and main then after_return(14): "result 15". Then
//                     outer() -> rethrower() -> thrower(2..0): rethrower catches and rethrows
//                     (`throw;`), outer catches: "rethrown 7". Then catcher_guarded() ->
//                     guarded(1) -> thrower(1..0): guarded's object's destructor throws and
//                     catches inside itself as the exception goes through: "guarded 7".
//   fn_unwind exit    a thread runs raii_at(2) -> raii_at(1) -> raii_at(0), each with an RAII
//                     object, the last calls exit_leaf(), which has none and calls
//                     pthread_exit: "destructors 3" (every one ran).
//   fn_unwind stop    the same with unwind_leaf, which calls _Unwind_ForcedUnwind
//                     whose stop function catches an exception of its own in the middle of the
//                     walk: "destructors 3".
//   fn_unwind cancel  the same with cancel_leaf, which cancels its own thread
//                     (pthread_testcancel: glibc's forced unwind, from inside glibc):
//                     "destructors 3".
// Then "cut N": the frames the tracer counted as cut (fxt_functions_counts).
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <pthread.h>
#include <unwind.h>

#include <fxtrace/functions.h>

#include "../fn_keep.h"

KEEP int thrower(int depth)
{
  if (depth == 0)
    throw 7;
  return thrower(depth - 1) + 1;
}

KEEP int after_catch(int v)
{
  return v * 2;
}

KEEP int catcher()
{
  try {
    return thrower(2);
  } catch (int v) {
    return after_catch(v);
  }
}

KEEP int after_return(int v)
{
  return v + 1;
}

KEEP int rethrower()
{
  try {
    return thrower(2);
  } catch (int) {
    throw; // from a frame redirected again by the catch
  }
}

KEEP int outer()
{
  try {
    return rethrower();
  } catch (int v) {
    return v;
  }
}

struct Guard {
  ~Guard()
  {
    try { // caught inside the destructor, while the exception that runs it goes on
      throw 1;
    } catch (int) {
    }
  }
};

KEEP int guarded(int depth)
{
  Guard g;
  return thrower(depth) + 1;
}

KEEP int catcher_guarded()
{
  try {
    return guarded(1);
  } catch (int v) {
    return v;
  }
}

static int destructed; // written by the exiting thread, read after the join

struct Raii {
  ~Raii() { destructed++; }
};

KEEP void exit_leaf(void)
{
  pthread_exit(nullptr);
}

// depth + 1 frames, each with an object whose destructor counts, the last calling leaf
KEEP int raii_at(int depth, void (*leaf)(void))
{
  Raii r;
  if (depth == 0) {
    leaf();
    return 0; // (gcc 12 takes the recursion for infinite without it: -Winfinite-recursion)
  }
  return raii_at(depth - 1, leaf) + 1;
}

KEEP void *exit_thread(void *)
{
  raii_at(2, exit_leaf);
  return nullptr;
}

KEEP void cancel_leaf(void)
{
  pthread_cancel(pthread_self());
  pthread_testcancel();
}

KEEP void *cancel_thread(void *)
{
  raii_at(2, cancel_leaf);
  return nullptr;
}

// A forced unwind whose stop function throws and catches inside itself on its first call, in
// the middle of the walk (as a signal handler could): the walk goes on through the frames of
// the thread, runs their destructors and, at the end of the stack, jumps back to stop_thread.
static jmp_buf stop_jb;
static int stop_calls;

static _Unwind_Reason_Code stop_fn(int, _Unwind_Action actions, _Unwind_Exception_Class,
                                   _Unwind_Exception *, _Unwind_Context *, void *)
{
  if (stop_calls++ == 0) {
    try {
      throw 2;
    } catch (int) {
    }
  }
  if (actions & _UA_END_OF_STACK)
    longjmp(stop_jb, 1);
  return _URC_NO_REASON;
}

KEEP void unwind_leaf(void)
{
  static _Unwind_Exception exc; // zeroed: class 0, no cleanup
  _Unwind_ForcedUnwind(&exc, stop_fn, nullptr);
}

KEEP void *stop_thread(void *)
{
  if (setjmp(stop_jb) == 0)
    raii_at(2, unwind_leaf);
  return nullptr;
}

int main(int argc, char **argv)
{
  if (argc > 1 && (std::strcmp(argv[1], "stop") == 0 || std::strcmp(argv[1], "cancel") == 0)) {
    pthread_t t;
    if (pthread_create(&t, nullptr, argv[1][0] == 's' ? stop_thread : cancel_thread, nullptr) != 0 ||
        pthread_join(t, nullptr) != 0)
      return 1;
    std::printf("destructors %d\n", destructed);
  } else if (argc > 1 && std::strcmp(argv[1], "exit") == 0) {
    pthread_t t;
    if (pthread_create(&t, nullptr, exit_thread, nullptr) != 0 || pthread_join(t, nullptr) != 0)
      return 1;
    std::printf("destructors %d\n", destructed);
  } else {
    std::printf("result %d\n", after_return(catcher()));
    std::printf("rethrown %d\n", outer());
    std::printf("guarded %d\n", catcher_guarded());
  }
  struct fxt_functions_counts c = {};
  c.struct_size = sizeof c;
  fxt_functions_counts(&c);
  std::printf("cut %llu\n", (unsigned long long)c.cut);
  return 0;
}
