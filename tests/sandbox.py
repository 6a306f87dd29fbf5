"""The test suite's sandbox: `python -m tests.sandbox COMMAND [ARG...]` runs COMMAND (the suite) in
network, PID and mount namespaces of its own.

- **Network: loopback only.** Every packet a test, a control-plane component, a picker or an engine
  sends stays on this machine. A connection to any other address (a private range, a Service's cluster
  IP, a name server) fails at once with "network is unreachable", and the kernel counts it in the
  namespace's ``OutNoRoutes``: `LoopbackGuard` reads that count, so an attempt fails the suite
  however short-lived it was.
- **PID: nothing outlives the suite.** COMMAND runs as the child of a small init, PID 1 of the new
  namespace. When COMMAND ends, whatever ends it (its own exit, a signal, the interpreter killed), the
  init ends, and the kernel kills every process left in the namespace; when this launcher is killed,
  the init gets SIGKILL (its parent-death signal) and the same follows. Components started with a
  session of their own are no exception.
- **Mount:** only to mount a /proc that shows the new PID namespace.

Signals: SIGTERM and SIGHUP sent to the launcher or the init reach COMMAND; SIGINT (a terminal's
Ctrl-C, sent to the whole process group) reaches COMMAND directly, and the launcher and init ignore it
so that COMMAND, which stops its cluster on KeyboardInterrupt, gets it once. The launcher exits as
COMMAND did (128 + N for signal N). It needs root (CAP_SYS_ADMIN), as `unshare --net --pid` does.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import re
import select
import signal
import socket
import struct
import sys
from collections.abc import Iterable
from pathlib import Path

CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
PR_SET_PDEATHSIG = 1
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1

MARK = "FUSION_TEST_SANDBOX"
"""Set for COMMAND to the inode of the sandbox's network namespace: `inside` compares it with the
namespace a process is in, so a process that merely inherited the variable is not taken for inside."""
FORWARDED = (signal.SIGTERM, signal.SIGHUP)
UNSET = ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
"""A proxy is an address outside loopback: nothing in the sandbox may use one."""
UNREACHABLE = re.compile(r"network is unreachable|Temporary failure in name resolution|no such host", re.I)
"""What a process logs when it tried to leave loopback: how the guard names the culprits."""


class SandboxError(RuntimeError):
    pass


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__, file=sys.stderr)
        return 2
    command = argv[1:] if argv[0] == "--" else argv
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)  # the sandbox ends with whoever started it (make)
    if libc.unshare(CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWNS) != 0:
        code = ctypes.get_errno()
        print(f"tests.sandbox: cannot make network and PID namespaces for the suite ({os.strerror(code)}): it "
              "needs root (CAP_SYS_ADMIN), as `unshare --net --pid` does", file=sys.stderr)
        return 1
    alive_read, alive_write = os.pipe()  # the init sees the launcher gone as end-of-file here
    init = os.fork()
    if init == 0:
        os.close(alive_write)
        _init(libc, command, alive_read)
    os.close(alive_read)
    for number in FORWARDED:
        signal.signal(number, lambda received, _frame: _forward(init, received))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _, status = os.waitpid(init, 0)
    return _exit_code(status)


def _init(libc: ctypes.CDLL, command: list[str], launcher_alive: int) -> None:
    """PID 1 of the sandbox: set it up, run COMMAND, reap every orphan, end with COMMAND."""
    try:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if select.select([launcher_alive], [], [], 0)[0]:  # the launcher died before prctl took effect
            os._exit(1)
        _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)  # nothing mounted here propagates out
        _mount(libc, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        _loopback_up()
        env = {key: value for key, value in os.environ.items() if key not in UNSET}
        env[MARK] = str(_network_namespace())
    except (OSError, SandboxError) as error:
        print(f"tests.sandbox: {error}", file=sys.stderr)
        os._exit(1)
    child = os.fork()
    if child == 0:
        try:
            os.execvpe(command[0], command, env)
        except OSError as error:
            print(f"tests.sandbox: {command[0]}: {error.strerror}", file=sys.stderr)
        os._exit(127)
    for number in FORWARDED:
        signal.signal(number, lambda received, _frame: _forward(child, received))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        pid, status = os.wait()
        if pid == child:
            os._exit(_exit_code(status))  # and the kernel kills what is left in the namespace


def _forward(pid: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # it has just ended: nothing to forward to
        os.kill(pid, number)


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def _mount(libc: ctypes.CDLL, source: str | None, target: str, kind: str | None, flags: int) -> None:
    def c(text: str | None) -> bytes | None:
        return None if text is None else text.encode()
    if libc.mount(c(source), c(target), c(kind), flags, None) != 0:
        raise SandboxError(f"mount {target}: {os.strerror(ctypes.get_errno())}")


def _loopback_up() -> None:
    """A new network namespace has its loopback interface down: bring it up (SIOCSIFFLAGS)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))


def _network_namespace() -> int:
    return os.stat("/proc/self/ns/net").st_ino


def interfaces() -> list[str]:
    """The network interfaces of this process's namespace."""
    lines = Path("/proc/net/dev").read_text().splitlines()[2:]
    return sorted(line.split(":", 1)[0].strip() for line in lines)


def inside() -> bool:
    """This process runs in a sandbox: its network namespace is the one the sandbox made, with
    loopback alone."""
    return os.environ.get(MARK) == str(_network_namespace()) and interfaces() == ["lo"]


# -- the guard -------------------------------------------------------------------------------------

def attempts_to_leave() -> int:
    """How many times a process of this network namespace tried to reach an address it has no route
    to: with loopback alone, every address outside 127.0.0.0/8 and ::1 (the kernel's ``OutNoRoutes``,
    IPv4 and IPv6, TCP and UDP alike)."""
    rows = [line.split() for line in Path("/proc/net/snmp").read_text().splitlines() if line.startswith("Ip:")]
    ipv4 = int(dict(zip(rows[0], rows[1], strict=True))["OutNoRoutes"])
    snmp6 = Path("/proc/net/snmp6")
    ipv6 = dict(line.split() for line in snmp6.read_text().splitlines()) if snmp6.exists() else {}
    return ipv4 + int(ipv6.get("Ip6OutNoRoutes", 0))


class LeftLoopback(AssertionError):
    """Something the suite started tried to reach an address outside loopback."""


class LoopbackGuard:
    """Counts the sandbox's attempts to leave loopback; `check` fails on any since the last check,
    naming the log lines (under LOGS) that tell who tried."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.seen = attempts_to_leave()

    def check(self) -> None:
        now = attempts_to_leave()
        new, self.seen = now - self.seen, now
        if new:
            raise LeftLoopback(f"{new} attempt(s) to reach an address outside 127.0.0.0/8 (the sandbox's "
                               f"OutNoRoutes); the logs say:\n" + "\n".join(culprits(self.logs.rglob("*.log"))))


def culprits(logs: Iterable[Path], limit: int = 10) -> list[str]:
    """The last lines of LOGS that say a connection or a lookup found no route."""
    found = []
    for log in sorted(logs):
        if log.is_file():
            found += [f"{log.name}: {line.strip()[:300]}" for line in log.read_text(errors="replace").splitlines()
                      if UNREACHABLE.search(line)]
    return found[-limit:] or ["(no log names it: a test's own process, or one that logs nothing)"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
