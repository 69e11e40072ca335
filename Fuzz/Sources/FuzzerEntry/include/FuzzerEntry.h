#ifndef PUSHWORKER_FUZZER_ENTRY_H
#define PUSHWORKER_FUZZER_ENTRY_H
// See FuzzerEntry.c. Nothing for Swift to call: the target exists for its symbols.
#endif
