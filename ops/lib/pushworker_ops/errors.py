"""The library's one exception. A RuntimeError, because ops/faults records any RuntimeError of a
fault run as a failed fault rather than a crashed suite."""


class OpsError(RuntimeError):
    pass
