// SwiftPM links a debug executable on Linux with `--defsym main=<Module>_main` (so that tests can
// import executables), which takes the place of libFuzzer's own `main`. Each fuzz target's
// `<Module>_main` is defined here and hands over to libFuzzer's driver; the target itself only
// defines LLVMFuzzerTestOneInput. Where SwiftPM does not rename `main`, libFuzzer's is used and
// these functions are never called.
#include <stddef.h>
#include <stdint.h>
#include "FuzzerEntry.h"

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PUSHWORKER_FUZZ_ENTRY(target) \
  int target##_main(int argc, char **argv) { return LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput); }

PUSHWORKER_FUZZ_ENTRY(FuzzJobParser)
PUSHWORKER_FUZZ_ENTRY(FuzzPlatformJobParser)
PUSHWORKER_FUZZ_ENTRY(FuzzGatewayInput)
PUSHWORKER_FUZZ_ENTRY(FuzzJSONParser)
PUSHWORKER_FUZZ_ENTRY(FuzzJSONWriterRoundTrip)
PUSHWORKER_FUZZ_ENTRY(FuzzDeviceToken)
PUSHWORKER_FUZZ_ENTRY(FuzzAMQPFieldTable)
PUSHWORKER_FUZZ_ENTRY(FuzzAMQPFrames)
PUSHWORKER_FUZZ_ENTRY(FuzzRedisReply)
PUSHWORKER_FUZZ_ENTRY(FuzzSandboxRequest)
