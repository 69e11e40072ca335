"""Runs a command under the seccomp half of a systemd unit's sandbox, read from the unit file.

    python3 -m deploy_check.unit_sandbox UNIT_FILE [--strict] [--uid N] -- COMMAND...

No systemd manager runs here (no `systemd-run`), so this applies what systemd 252 would apply
through seccomp, with libseccomp (libseccomp.so.2, through ctypes), then execs COMMAND:

  SystemCallFilter=        the allow-list and its `~` removals, groups expanded by
                           `systemd-analyze syscall-filter` (the same tables systemd uses), plus
                           the calls systemd always allows (execve, exit, rt_sigreturn, clocks and
                           sleeps, getrlimit); a call outside it answers SystemCallErrorNumber=
                           (EPERM), or with --strict kills the process (SIGSYS), so that a call the
                           unit would refuse quietly shows up;
  MemoryDenyWriteExecute=  mmap with PROT_WRITE|PROT_EXEC, mprotect/pkey_mprotect adding
                           PROT_EXEC, shmat with SHM_EXEC: EPERM (systemd's own rules);
  RestrictAddressFamilies= socket() with another family: EAFNOSUPPORT;
  NoNewPrivileges=         set (seccomp needs it anyway);
  DynamicUser=/CapabilityBoundingSet= (approximated by --uid N: setgroups([]), setresgid and
                           setresuid to N, which drops every capability).

Not emulated (they need the service manager's mount and user namespaces): ProtectSystem,
ProtectHome, PrivateTmp, PrivateDevices, PrivateUsers, ProtectProc, ProtectKernel*, the
credentials directory. The caller says so.
"""
import ctypes
import ctypes.util
import errno
import os
import re
import subprocess
import sys

SCMP_ACT_KILL_PROCESS = 0x80000000
SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_CMP_NE, SCMP_CMP_EQ, SCMP_CMP_GE, SCMP_CMP_MASKED_EQ = 1, 4, 5, 7
PROT_WRITE, PROT_EXEC = 0x2, 0x4
SHM_EXEC = 0o100000
AF_UNIX, AF_INET, AF_INET6, AF_MAX = 1, 2, 10, 46
FAMILIES = {"AF_UNIX": AF_UNIX, "AF_LOCAL": AF_UNIX, "AF_INET": AF_INET, "AF_INET6": AF_INET6, "AF_NETLINK": 16,
            "AF_PACKET": 17}
# What systemd allows whatever the filter says (man systemd.exec, SystemCallFilter=).
ALWAYS = ["execve", "exit", "exit_group", "getrlimit", "rt_sigreturn", "sigreturn", "clock_getres",
          "clock_gettime", "clock_nanosleep", "gettimeofday", "nanosleep", "time"]


def SCMP_ACT_ERRNO(number):
    return 0x00050000 | (number & 0xFFFF)


class ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


def unit_settings(path):
    """[Service] key -> list of values, in order (repeated keys kept; an empty value resets)."""
    settings, section = {}, None
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line.strip("[]")
                continue
            if section != "Service" or "=" not in line:
                continue
            key, value = (part.strip() for part in line.split("=", 1))
            if value == "":
                settings[key] = []
            else:
                settings.setdefault(key, []).append(value)
    return settings


def syscall_groups():
    """Every group `systemd-analyze syscall-filter` knows: name -> its members (calls and @groups)."""
    text = subprocess.run(["systemd-analyze", "syscall-filter", "--no-pager"], check=True, capture_output=True,
                          text=True).stdout
    groups, current = {}, None
    for line in text.splitlines():
        if line.startswith("@"):
            current = line.strip()
            groups[current] = []
        elif current and line.strip() and not line.strip().startswith("#"):
            groups[current].append(line.strip())
    return groups


def expand(names, groups, seen=None):
    seen = set() if seen is None else seen
    calls = set()
    for name in names:
        if name.startswith("@"):
            if name not in groups:
                raise SystemExit(f"unit_sandbox: unknown system call group {name}")
            if name in seen:
                continue
            seen.add(name)
            calls |= expand(groups[name], groups, seen)
        else:
            calls.add(name.split(":")[0])
    return calls


def allowed_calls(settings):
    """The allow-list SystemCallFilter= makes, or None when the unit sets none."""
    lines = settings.get("SystemCallFilter", [])
    if not lines:
        return None
    if lines[0].startswith("~"):
        raise SystemExit("unit_sandbox: a deny-list-first SystemCallFilter is not emulated")
    groups = syscall_groups()
    allowed = set()
    for line in lines:
        deny = line.startswith("~")
        calls = expand(line.lstrip("~").split(), groups)
        allowed = allowed - calls if deny else allowed | calls
    return allowed | set(ALWAYS)


def errno_of(settings):
    value = (settings.get("SystemCallErrorNumber") or [None])[-1]
    if value is None:
        return None
    return getattr(errno, value, None) if not value.isdigit() else int(value)


def load(lib, ctx, what):
    if lib.seccomp_load(ctx) != 0:
        raise SystemExit(f"unit_sandbox: seccomp_load failed for {what}")
    lib.seccomp_release(ctx)


def add(lib, ctx, action, name, *conditions):
    number = lib.seccomp_syscall_resolve_name(name.encode())
    if number < 0:          # not a call on this architecture (e.g. a 32-bit-only one)
        return False
    array = (ArgCmp * len(conditions))(*conditions) if conditions else None
    rc = lib.seccomp_rule_add_array(ctx, ctypes.c_uint32(action), number, len(conditions), array)
    if rc != 0:
        raise SystemExit(f"unit_sandbox: seccomp_rule_add {name} failed ({rc})")
    return True


def apply(settings, strict):
    lib = ctypes.CDLL(ctypes.util.find_library("seccomp") or "libseccomp.so.2", use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(ArgCmp)]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    applied = []

    if (settings.get("MemoryDenyWriteExecute") or ["no"])[-1] in ("yes", "true", "1", "on"):
        ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
        eperm = SCMP_ACT_ERRNO(errno.EPERM)
        wx = PROT_WRITE | PROT_EXEC
        add(lib, ctx, eperm, "mmap", ArgCmp(2, SCMP_CMP_MASKED_EQ, wx, wx))
        add(lib, ctx, eperm, "mprotect", ArgCmp(2, SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC))
        add(lib, ctx, eperm, "pkey_mprotect", ArgCmp(2, SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC))
        add(lib, ctx, eperm, "shmat", ArgCmp(2, SCMP_CMP_MASKED_EQ, SHM_EXEC, SHM_EXEC))
        load(lib, ctx, "MemoryDenyWriteExecute")
        applied.append("MemoryDenyWriteExecute")

    families = settings.get("RestrictAddressFamilies")
    if families:
        names = " ".join(families).split()
        if names[0].startswith("~"):
            raise SystemExit("unit_sandbox: a deny-list RestrictAddressFamilies is not emulated")
        keep = {FAMILIES[n] for n in names}
        ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
        refuse = SCMP_ACT_ERRNO(errno.EAFNOSUPPORT)
        for family in range(AF_MAX):
            if family not in keep:
                add(lib, ctx, refuse, "socket", ArgCmp(0, SCMP_CMP_EQ, family, 0))
        add(lib, ctx, refuse, "socket", ArgCmp(0, SCMP_CMP_GE, AF_MAX, 0))
        load(lib, ctx, "RestrictAddressFamilies")
        applied.append("RestrictAddressFamilies " + " ".join(names))
    # Last: once it is loaded, seccomp() itself may be outside the allow-list.
    allowed = allowed_calls(settings)
    if allowed is not None:
        number = errno_of(settings)
        deny = SCMP_ACT_KILL_PROCESS if strict or number is None else SCMP_ACT_ERRNO(number)
        ctx = lib.seccomp_init(deny)
        known = sum(add(lib, ctx, SCMP_ACT_ALLOW, name) for name in sorted(allowed))
        load(lib, ctx, "SystemCallFilter")
        applied.append(f"SystemCallFilter ({known} calls allowed, others "
                       f"{'kill' if deny == SCMP_ACT_KILL_PROCESS else errno.errorcode[number]})")

    return applied


def main(argv):
    if "--" not in argv:
        raise SystemExit(__doc__)
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    unit = options[0]
    strict = "--strict" in options
    uid = int(options[options.index("--uid") + 1]) if "--uid" in options else None
    settings = unit_settings(unit)
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    # seccomp without CAP_SYS_ADMIN needs no_new_privs; systemd sets it for NoNewPrivileges=yes too.
    PR_SET_NO_NEW_PRIVS = 38
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise SystemExit("unit_sandbox: prctl(PR_SET_NO_NEW_PRIVS) failed")
    applied = apply(settings, strict)
    print(f"unit_sandbox: {os.path.basename(unit)}: {'; '.join(applied)}"
          + (f"; uid {uid}, no capabilities" if uid is not None else ""), file=sys.stderr, flush=True)
    os.execv(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
