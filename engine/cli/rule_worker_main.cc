// litmus-rule-worker: the process one isolated rule runs in, started by `litmus run` (the
// protocol and its arguments: isolation/rule_worker.h). A separate executable because it starts
// faster than litmus: it loads only what a worker uses.
#include "isolation/rule_worker.h"

int main(int argc, char** argv) { return litmus::isolation::RunRuleWorker(argc, argv); }
