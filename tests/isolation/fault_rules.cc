// fault_rules: the isolation fault gallery, one rule per way a plugin can take its process down
// or never come back. Each misbehaves at the first evaluated global step >= at_step (default 2)
// and is quiet (condition not met) before it:
//   Segfault        writes through a null pointer (SIGSEGV)
//   Abort           calls abort() (SIGABRT)
//   ExitZero        calls exit(0)
//   ExitSeven       calls _exit(7)
//   InfiniteLoop    spins forever
//   UnboundedMalloc allocates 64 MiB blocks until new fails, keeping them (std::bad_alloc, which
//                   the SDK turns into LITMUS_INTERNAL "out of memory")
//   StackOverflow   recurses without end (SIGSEGV on the guard page)
//   EndlessThread   starts, in create, a thread that never ends; evaluates normally (never fires)
//   FloodStdout     writes 100 MB to stdout, then evaluates normally (never fires)
// With in_declare true a rule misbehaves in set_required_tensors instead, and before at_step its
// set_required_tensors finds no tensor (TensorUnavailableForStep: the step is skipped).
// The host must end only the misbehaving rule, naming the cause. Built like any plugin.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "litmus/rule.hpp"

namespace {

class FaultRule : public litmus::Rule {
 public:
  explicit FaultRule(const litmus::RuleArgs& args)
      : Rule(args),
        at_step_(param_int("at_step")),
        fires_from_(param_int("fires_from")),
        in_declare_(param_bool("in_declare")) {}
  void set_required_tensors(int64_t step) override {
    if (!in_declare_) return;
    if (step >= at_step_) Misbehave();
    throw litmus::TensorUnavailableForStep("in_declare", step);
  }
  bool invoke_at_step(int64_t step) override {
    if (!in_declare_ && step >= at_step_) Misbehave();
    return fires_from_ >= 0 && step >= fires_from_;
  }
  virtual void Misbehave() = 0;

 protected:
  int64_t at_step_;
  int64_t fires_from_;
  bool in_declare_;
};

class Segfault : public FaultRule {
 public:
  using FaultRule::FaultRule;
  void Misbehave() override {
    volatile int* volatile target = nullptr;
    *target = 42;
  }
};

class Abort : public FaultRule {
 public:
  using FaultRule::FaultRule;
  void Misbehave() override { std::abort(); }
};

class ExitZero : public FaultRule {
 public:
  using FaultRule::FaultRule;
  void Misbehave() override { std::exit(0); }
};

class ExitSeven : public FaultRule {
 public:
  using FaultRule::FaultRule;
  void Misbehave() override { _exit(7); }
};

class InfiniteLoop : public FaultRule {
 public:
  using FaultRule::FaultRule;
  void Misbehave() override {
    volatile uint64_t spins = 0;
    while (true) spins = spins + 1;
  }
};

// Never freed: the blocks stay reachable, the worker's memory only grows.
std::vector<char*>& Hoard() {
  static auto* blocks = new std::vector<char*>;
  return *blocks;
}

// A 64 MiB block from operator new, which throws std::bad_alloc once the memory limit is reached.
// AddressSanitizer's operator new cannot throw (it reports and aborts), so in a sanitizer build the
// same failure comes from malloc, which returns null there (the gallery sets
// allocator_may_return_null=1), turned into the std::bad_alloc operator new throws elsewhere.
char* AllocateBlock() {
  constexpr std::size_t kBlock = std::size_t{64} << 20;
#ifdef LITMUS_FAULT_RULES_UNDER_ASAN
  void* block = std::malloc(kBlock);
  if (block == nullptr) throw std::bad_alloc();
  return static_cast<char*>(block);
#else
  return new char[kBlock];
#endif
}

class UnboundedMalloc : public FaultRule {
 public:
  using FaultRule::FaultRule;
  void Misbehave() override {
    while (true) {
      Hoard().push_back(AllocateBlock());
      Hoard().back()[0] = 1;
    }
  }
};

// Recurses until `limit` (never reached: the stack ends first); the condition keeps the
// compiler from calling it infinite, the frame from turning it into a loop.
int Recurse(int depth, int limit) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  if (depth == limit) return frame[0];
  return Recurse(depth + 1, limit) + frame[0];
}

class StackOverflow : public FaultRule {
 public:
  using FaultRule::FaultRule;
  void Misbehave() override { Recurse(0, -1); }
};

class EndlessThread : public litmus::Rule {
 public:
  explicit EndlessThread(const litmus::RuleArgs& args) : Rule(args) {
    std::thread([] {
      while (true) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }).detach();
  }
  bool invoke_at_step(int64_t) override { return false; }
};

class FloodStdout : public FaultRule {
 public:
  using FaultRule::FaultRule;
  bool invoke_at_step(int64_t step) override {
    if (step >= at_step_ && !flooded_) {
      flooded_ = true;
      Misbehave();
    }
    return false;
  }
  void Misbehave() override {
    std::vector<char> line(1 << 20, 'F');
    line.back() = '\n';
    for (int i = 0; i < 100; ++i) std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
  }

 private:
  bool flooded_ = false;
};

}  // namespace

#define FAULT_RULE(Class, what)                                                   \
  LITMUS_RULE(Class, #Class, "1.0.0", what,                                      \
              litmus::IntParam("at_step", "2", "first global step that misbehaves"), \
              litmus::IntParam("fires_from", "-1", "first global step it fires at before that (-1: none)"), \
              litmus::BoolParam("in_declare", "false", "misbehave in set_required_tensors (no tensor before)"))

LITMUS_RULE_PLUGIN("fault_rules", "1.0.0",
                   FAULT_RULE(Segfault, "writes through a null pointer"),
                   FAULT_RULE(Abort, "calls abort()"),
                   FAULT_RULE(ExitZero, "calls exit(0)"),
                   FAULT_RULE(ExitSeven, "calls _exit(7)"),
                   FAULT_RULE(InfiniteLoop, "spins forever"),
                   FAULT_RULE(UnboundedMalloc, "allocates until new fails"),
                   FAULT_RULE(StackOverflow, "recurses without end"),
                   LITMUS_RULE(EndlessThread, "EndlessThread", "1.0.0", "starts a thread that never ends"),
                   FAULT_RULE(FloodStdout, "writes 100 MB to stdout"));
