"""Progress lines, `[HH:MM:SS] text`, on stdout unless a script chose another stream (ops/bench
keeps stdout for its table)."""
import time

_stream = None          # None: print's default, sys.stdout
_verbose = False


def configure(stream=None, verbose=False):
    global _stream, _verbose
    _stream, _verbose = stream, verbose


def log(text):
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=_stream, flush=True)


def debug(text):
    """A line that only --verbose shows."""
    if _verbose:
        log(text)
