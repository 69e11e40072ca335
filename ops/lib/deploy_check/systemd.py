"""Checks of the systemd units: systemd-analyze verify and security (offline), the settings the
deployment relies on, and whether the binary can live with MemoryDenyWriteExecute=yes."""
import re
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

from .dockerfile import ldd_libraries
from .unit_sandbox import unit_settings

INSTALLED_BINARY = "/usr/local/bin/pushworker"
TEMPLATE_INSTANCE = "8081"
MAX_EXPOSURE = 2.0
REQUIRED = {
    "DynamicUser": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
    "NoNewPrivileges": "yes", "CapabilityBoundingSet": "", "MemoryDenyWriteExecute": "yes",
    "RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX", "SystemCallArchitectures": "native",
    "Restart": "on-failure", "KillSignal": "SIGTERM", "Type": "exec",
}


def seconds(value):
    match = re.fullmatch(r"(\d+)\s*(s|sec|min|m)?", value.strip())
    if not match:
        raise ValueError(f"cannot read the duration {value!r}")
    return int(match.group(1)) * (60 if match.group(2) in ("min", "m") else 1)


def last(settings, key):
    values = settings.get(key)
    if values is None:
        return None
    return values[-1] if values else ""


def environment(settings):
    result = {}
    for line in settings.get("Environment", []):
        for item in line.split():
            name, _, value = item.partition("=")
            result[name] = value
    return result


def elf_problems(path):
    """What MemoryDenyWriteExecute=yes would break in this ELF file: an executable stack (the loader
    mprotects it executable), text relocations (code pages made writable, then executable again), a
    segment both writable and executable."""
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return [f"{path}: not a 64-bit little-endian ELF file"]
    problems = []
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    dynamic = None
    stack_seen = False
    for i in range(phnum):
        p_type, p_flags, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 0x6474E551:        # PT_GNU_STACK
            stack_seen = True
            if p_flags & 1:
                problems.append(f"{path}: executable stack (PT_GNU_STACK has X)")
        elif p_type == 1 and p_flags & 1 and p_flags & 2:      # PT_LOAD, X and W
            problems.append(f"{path}: a LOAD segment both writable and executable")
        elif p_type == 2:               # PT_DYNAMIC
            dynamic = (p_offset, p_filesz)
    if not stack_seen:
        problems.append(f"{path}: no PT_GNU_STACK (the loader would assume an executable stack)")
    if dynamic:
        offset, size = dynamic
        for j in range(0, size, 16):
            tag, value = struct.unpack_from("<qQ", data, offset + j)
            if tag == 0:
                break
            if tag == 22 or (tag == 30 and value & 0x4):       # DT_TEXTREL, DF_TEXTREL
                problems.append(f"{path}: text relocations")
    return problems


def check(units, binary):
    """units: the unit files. Returns (problems, notes)."""
    problems, notes = [], []
    with tempfile.TemporaryDirectory(prefix="pushworker-units-") as work:
        # ExecStart must exist for verify: the units point at the installed path; here, a copy of
        # each points at the binary given (copied, so the path has no odd characters).
        copy = Path(work) / "pushworker"
        shutil.copy(binary, copy)
        names = []
        for unit in units:
            text = Path(unit).read_text().replace(INSTALLED_BINARY, str(copy))
            name = Path(unit).name.replace("@.service", f"@{TEMPLATE_INSTANCE}.service")
            (Path(work) / name).write_text(text)
            names.append(name)
        verify = subprocess.run(["systemd-analyze", "verify", "--man=no", *names], cwd=work, capture_output=True, text=True)
        output = (verify.stdout + verify.stderr).strip()
        if verify.returncode != 0 or output:
            problems.append(f"systemd-analyze verify: exit {verify.returncode}: {output}")
        else:
            notes.append(f"systemd-analyze verify {' '.join(names)}: no complaint")
        for name in names:
            security = subprocess.run(["systemd-analyze", "security", "--offline=yes", "--no-pager", name], cwd=work,
                                      capture_output=True, text=True)
            match = re.search(r"Overall exposure level for \S+: ([\d.]+) (\w+)", security.stdout)
            if not match:
                problems.append(f"systemd-analyze security {name}: no exposure level in its output: {security.stderr.strip()}")
            elif float(match.group(1)) > MAX_EXPOSURE:
                problems.append(f"systemd-analyze security {name}: exposure {match.group(1)} above {MAX_EXPOSURE}")
            else:
                notes.append(f"systemd-analyze security --offline {name}: exposure {match.group(1)} {match.group(2)}")

    hardening = {}
    for unit in units:
        settings = unit_settings(unit)
        name = Path(unit).name
        for key, value in REQUIRED.items():
            if last(settings, key) != value:
                problems.append(f"{name}: {key}={last(settings, key)}, expected {value!r}")
        filters = settings.get("SystemCallFilter", [])
        if not filters or filters[0] != "@system-service":
            problems.append(f"{name}: SystemCallFilter does not start with the @system-service allow-list")
        env = environment(settings)
        if env.get("PUSHWORKER_CONFIG") != "/etc/pushworker/pushworker.yaml":
            problems.append(f"{name}: PUSHWORKER_CONFIG={env.get('PUSHWORKER_CONFIG')}")
        shutdown = int(env.get("PUSHWORKER_SHUTDOWN_TIMEOUT", "30"))
        stop = seconds(last(settings, "TimeoutStopSec") or "90")
        if stop <= shutdown:
            problems.append(f"{name}: TimeoutStopSec {stop}s is not above the shutdown timeout {shutdown}s")
        start = last(settings, "ExecStart") or ""
        if start.split()[:2] != [INSTALLED_BINARY, "run"]:
            problems.append(f"{name}: ExecStart={start}")
        if not settings.get("EnvironmentFile") and not any(k.startswith("LoadCredential") for k in settings):
            problems.append(f"{name}: neither EnvironmentFile= nor LoadCredential= for the secrets")
        if not any("kill -HUP" in line for line in settings.get("ExecReload", [])):
            problems.append(f"{name}: ExecReload does not send SIGHUP")
        hardening[name] = {k: v for k, v in settings.items()
                           if k not in ("Environment", "EnvironmentFile", "SyslogIdentifier", "LoadCredential")}
        notes.append(f"{name}: TimeoutStopSec {stop}s > shutdown timeout {shutdown}s; KillSignal=SIGTERM, "
                     f"Restart=on-failure; PUSHWORKER_CONFIG=/etc/pushworker/pushworker.yaml")
    if len(hardening) > 1:
        first, *others = hardening.items()
        for name, settings in others:
            differing = sorted(k for k in set(first[1]) | set(settings) if first[1].get(k) != settings.get(k))
            if differing:
                problems.append(f"{name} and {first[0]} differ in {', '.join(differing)}")

    elf = elf_problems(binary)
    libraries = ldd_libraries(binary)
    for path in libraries.values():
        elf += elf_problems(path)
    if elf:
        problems += [f"MemoryDenyWriteExecute: {p}" for p in elf]
    else:
        notes.append(f"MemoryDenyWriteExecute: the binary and its {len(libraries)} libraries have no executable "
                     "stack, no text relocations, no writable and executable segment")
    return problems, notes
