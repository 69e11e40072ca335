// jemalloc reads this at start-up (release builds link it: Package.swift). Each option, and why:
// - background_thread: a thread returns freed pages on time; without it an idle worker kept
//   the pages of its last burst;
// - dirty_decay_ms 1000 / muzzy_decay_ms 0: freed pages go back to the kernel after a second, not
//   the default ten, so the fan-out's peak stays near glibc's;
// - narenas 2: the worker has two busy threads (AMQP, HTTP/2); the default (4 per CPU) only
//   adds memory.
// Measured: docs/evidence/code-measurements.md#jemalloc-options.
const char *malloc_conf = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,narenas:2";
