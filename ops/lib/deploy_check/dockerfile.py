"""Checks of ops/deploy/Dockerfile that need no Docker engine: its stages and instructions, and the
runtime stage's packages against the libraries `ldd` lists for the release binary."""
import json
import os
import re
import shlex
import subprocess
from pathlib import Path

# In every Debian image (Essential: yes), so not installed by the Dockerfile.
BASE_PACKAGES = {"libc6"}
# Installed for something other than a library the binary loads, each with its reason.
EXTRA_PACKAGES = {"ca-certificates": "the system CA store: APNs, FCM and Web Push certificates are verified against it"}


def instructions(path):
    """[(instruction, arguments)] with continuation lines joined and comments dropped."""
    lines, current = [], ""
    for raw in Path(path).read_text().splitlines():
        stripped = raw.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if current and stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        current += stripped
        lines.append(current)
        current = ""
    result = []
    for line in lines:
        word, _, rest = line.partition(" ")
        result.append((word.upper(), rest.strip()))
    return result


def stages(path):
    """[(name, base image, [(instruction, arguments)])], ARGs before the first FROM substituted."""
    args, result = {}, []
    for word, rest in instructions(path):
        if word == "ARG" and not result:
            name, _, default = rest.partition("=")
            args[name] = default
        elif word == "FROM":
            parts = rest.split()
            parts = [p for p in parts if not p.startswith("--")]
            image = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m.group(1) or m.group(2), m.group(0)), parts[0])
            name = parts[2] if len(parts) >= 3 and parts[1].upper() == "AS" else str(len(result))
            result.append((name, image, []))
        elif result:
            result[-1][2].append((word, rest))
    return result


def apt_packages(stage_instructions):
    """The packages of every `apt-get install` in the stage's RUN instructions."""
    packages = []
    for word, rest in stage_instructions:
        if word != "RUN":
            continue
        for command in re.split(r"&&|;|\|\|", rest):
            tokens = shlex.split(command)
            if "apt-get" in tokens and "install" in tokens:
                after = tokens[tokens.index("install") + 1:]
                packages += [t for t in after if not t.startswith("-") and "=" not in t]
    return packages


def ldd_libraries(binary):
    """{soname: resolved path} that ldd lists (the vDSO and the loader left out)."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    libraries = {}
    for line in out.splitlines():
        match = re.match(r"\s*(\S+)\s+=>\s+(\S+)", line)
        if match:
            if match.group(2) == "not":
                raise RuntimeError(f"ldd: {match.group(1)} not found")
            libraries[match.group(1)] = match.group(2)
    return libraries


def debian_package(path):
    """The Debian package that ships path (dpkg -S, trying the /usr-merged twin too)."""
    real = os.path.realpath(path)
    candidates = {path, real}
    for p in list(candidates):
        candidates.add(p[4:] if p.startswith("/usr/") else "/usr" + p)
    for candidate in sorted(candidates):
        done = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if done.returncode == 0:
            return done.stdout.split(":")[0].strip()
    raise RuntimeError(f"dpkg -S: no package ships {path}")


def install_deps_dev_packages(install_deps):
    """The -dev packages ops/install-deps.sh installs for the libraries the worker links: those on
    its lines whose comment says "link" or "allocator"."""
    packages = set()
    for line in Path(install_deps).read_text().splitlines():
        code, _, comment = line.partition("#")
        if "link" in comment or "allocator" in comment:
            packages |= set(re.findall(r"\b(lib[\w.+-]+-dev)\b", code))
    return sorted(packages)


def check(path, binary, install_deps, build_release):
    problems, notes = [], []
    found = stages(path)
    if len(found) < 2:
        return [f"expected a build stage and a runtime stage, found {len(found)} stage(s)"], notes
    (build_name, build_image, build), (runtime_name, runtime_image, runtime) = found[0], found[-1]
    if not re.fullmatch(r"swift:6\.\d+(\.\d+)?-bookworm", build_image):
        problems.append(f"build stage FROM {build_image}: expected swift:6.x-bookworm")
    if runtime_image != "debian:bookworm-slim":
        problems.append(f"runtime stage FROM {runtime_image}: expected debian:bookworm-slim")

    dev = set(apt_packages(build))
    wanted_dev = set(install_deps_dev_packages(install_deps))
    if wanted_dev - dev:
        problems.append(f"build stage lacks {', '.join(sorted(wanted_dev - dev))} (ops/install-deps.sh installs them)")
    if not any(word == "RUN" and "ops/build-release.sh" in rest for word, rest in build):
        problems.append("build stage does not run ops/build-release.sh")
    if "--static-swift-stdlib" not in Path(build_release).read_text():
        problems.append("ops/build-release.sh no longer links the Swift runtime statically: the runtime "
                        "stage would need /usr/lib/swift/linux")
    if not any(word == "COPY" and f"--from={build_name}" in rest for word, rest in runtime):
        problems.append(f"runtime stage copies nothing from {build_name}")

    # The runtime packages, against what the binary loads.
    libraries = ldd_libraries(binary)
    swift = [s for s in libraries if s.startswith("libswift") or s.startswith("libFoundation") or s.startswith("libdispatch")
             or s.startswith("lib_Foundation") or s.startswith("libBlocksRuntime") or s.startswith("lib_Testing")
             or libraries[s].startswith("/opt/swift/")]
    if swift and os.environ.get("DEPLOY_CHECK_DEBUG_BUILD") == "1":
        # The test command checks a debug build (a release build would double its time): the
        # toolchain's shared runtime is what a debug build loads and the release build links in.
        for soname in swift:
            libraries.pop(soname)
        notes.append(f"debug build: {len(swift)} Swift runtime libraries not compared (the release build links them statically)")
    elif swift:
        problems.append(f"the binary loads Swift runtime libraries ({', '.join(swift)}): not a --static-swift-stdlib build")
    needed = {}
    for soname, resolved in libraries.items():
        needed.setdefault(debian_package(resolved), []).append(soname)
    if os.environ.get("DEPLOY_CHECK_DEBUG_BUILD") == "1":
        # jemalloc is linked by ops/build-release.sh only.
        needed.setdefault("libjemalloc2", []).append("libjemalloc.so.2 (release build)")
    installed = set(apt_packages(runtime))
    missing = set(needed) - installed - BASE_PACKAGES
    unexplained = installed - set(needed) - set(EXTRA_PACKAGES)
    if missing:
        problems.append("runtime stage lacks " + ", ".join(f"{p} ({' '.join(needed[p])})" for p in sorted(missing)))
    if unexplained:
        problems.append(f"runtime stage installs {', '.join(sorted(unexplained))}: no library ldd lists, no known reason")
    notes.append("ldd → Debian package: " + "; ".join(f"{p}: {' '.join(sorted(needed[p]))}" for p in sorted(needed)))
    notes.append(f"runtime stage installs {len(installed)} packages: {len(installed & set(needed))} for those "
                 f"libraries, {', '.join(sorted(installed & set(EXTRA_PACKAGES)))} for the CA store; "
                 f"{', '.join(sorted(BASE_PACKAGES & set(needed)))} is in the base image")

    def last(word):
        values = [rest for w, rest in runtime if w == word]
        return values[-1] if values else None
    user = last("USER")
    if not user or user.split(":")[0] in ("root", "0"):
        problems.append(f"runtime stage USER {user}: expected a non-root user")
    if last("STOPSIGNAL") != "SIGTERM":
        problems.append(f"STOPSIGNAL {last('STOPSIGNAL')}: expected SIGTERM")
    for word, expected in (("ENTRYPOINT", ["pushworker"]), ("CMD", ["run"])):
        value = last(word)
        try:
            parsed = json.loads(value) if value else None
        except ValueError:
            parsed = value
        if parsed != expected:
            problems.append(f"{word} {value}: expected {json.dumps(expected)}")
    health = last("HEALTHCHECK") or ""
    if "/livez" not in health:
        problems.append("HEALTHCHECK does not ask /livez")
    env = " ".join(rest for w, rest in runtime if w == "ENV")
    for variable, value in (("PUSHWORKER_CONFIG", "/etc/pushworker/pushworker.yaml"), ("PUSHWORKER_STATUS_PORT", "8081"),
                            ("PUSHWORKER_STATUS_HOST", "0.0.0.0")):
        if f"{variable}={value}" not in env:
            problems.append(f"ENV {variable}={value} missing")
    if "8081" not in (last("EXPOSE") or ""):
        problems.append("EXPOSE 8081 missing")
    notes.append(f"stages: {build_name} ({build_image}), {runtime_name} ({runtime_image}); USER {user}, "
                 f"STOPSIGNAL SIGTERM, ENTRYPOINT [\"pushworker\"], CMD [\"run\"], HEALTHCHECK on /livez")
    return problems, notes
