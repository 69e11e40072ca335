"""What ops/faults, ops/bench, ops/soak and ops/kill-loop share: processes, services, Redis, the
broker, the APNs sandbox and the fault-suite harness. The scripts put ops/lib on sys.path."""
