"""``python -m aicslib.distribute.launch -n 4 [--hostfile hosts] [--timeout S] script.py [args...]``

Starts ``script.py`` as ``n`` MPI ranks through ``mpiexec`` (what ``horovodrun`` and
``torchrun`` do for their libraries), and watches the job:

* each rank runs under ``python -m mpi4py``, so an uncaught exception in any rank
  calls ``MPI_Abort`` and takes the whole job down instead of leaving the others
  waiting; a rank killed by a signal makes MPICH's process manager stop the rest;
* ``--timeout`` bounds the whole job: past it, every process of the job is
  killed and the launcher exits 124 with a message;
* a host file (one host per line: ``host``, ``host:slots`` as MPICH writes it,
  or ``host slots=N`` as Open MPI does) is checked before anything starts and
  handed to mpiexec in its own format, so the same script runs across machines;
* a missing MPI is reported with how to install it (the ``mpi`` extra).

Exit status: the job's (0 when every rank succeeded).
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

from ..framework.file_io import atomic_write_string_to_file
from .mpi import MISSING_MPI

_HOST = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")


class LaunchError(RuntimeError):
    """A job that cannot start: no MPI, a bad host file, a bad argument."""


def find_mpiexec():
    """The mpiexec beside this Python (a venv's), else on PATH; LaunchError naming the fix."""
    here = os.path.dirname(sys.executable)
    path = here + os.pathsep + os.environ.get("PATH", "")
    exe = shutil.which("mpiexec", path=path)
    if exe is None:
        raise LaunchError(f"mpiexec not found (looked in {here} and on PATH). {MISSING_MPI}")
    try:
        import importlib.util
        if importlib.util.find_spec("mpi4py") is None:
            raise ImportError("No module named 'mpi4py'")
    except ImportError as e:
        raise LaunchError(f"{MISSING_MPI} ({e})") from None
    return exe


def mpi_flavor(mpiexec):
    """'mpich' (Hydra) or 'openmpi', from ``mpiexec --version``."""
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        raise LaunchError(f"Could not run {mpiexec} --version: {e}. {MISSING_MPI}") from None
    return "openmpi" if "Open MPI" in out or "OpenRTE" in out else "mpich"


def parse_hostfile(path):
    """[(host, slots)] from a host file; LaunchError naming the file, line and what is wrong."""
    if not os.path.isfile(path):
        raise LaunchError(f"Host file {path!r} does not exist (or is not a file).")
    hosts = []
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            m = (re.fullmatch(r"(\S+?):(\S+)", line) or re.fullmatch(r"(\S+)\s+slots\s*=\s*(\S+)", line)
                 or re.fullmatch(r"(\S+)", line))
            host = m.group(1) if m else line
            slots = m.group(2) if m and m.lastindex == 2 else "1"
            if m is None or not _HOST.match(host):
                raise LaunchError(f"Host file {path!r}, line {lineno}: {raw.strip()!r} is not a host "
                                  f"entry; expected 'hostname', 'hostname:slots' or 'hostname slots=N'.")
            if not slots.isdigit() or int(slots) < 1:
                raise LaunchError(f"Host file {path!r}, line {lineno}: slots must be a positive "
                                  f"integer, got {slots!r} in {raw.strip()!r}.")
            hosts.append((host, int(slots)))
    if not hosts:
        raise LaunchError(f"Host file {path!r} lists no hosts (only blank lines and comments).")
    return hosts


def write_hostfile(hosts, flavor, directory):
    path = os.path.join(directory, "hosts")
    lines = [f"{host} slots={slots}\n" if flavor == "openmpi" else f"{host}:{slots}\n"
             for host, slots in hosts]
    atomic_write_string_to_file(path, "".join(lines))
    return path


def command(script, n, args=(), hostfile=None, mpiexec=None, python=None, workdir=None):
    """The mpiexec command line for ``n`` ranks of ``script`` (validating a host file)."""
    if not isinstance(n, int) or n < 1:
        raise LaunchError(f"-n must be a positive number of processes, got {n!r}.")
    if not os.path.isfile(script):
        raise LaunchError(f"Script {script!r} does not exist.")
    mpiexec = mpiexec or find_mpiexec()
    cmd = [mpiexec, "-n", str(n)]
    if hostfile is not None:
        hosts = parse_hostfile(hostfile)
        flavor = mpi_flavor(mpiexec)
        normalized = write_hostfile(hosts, flavor, workdir or tempfile.mkdtemp(prefix="aics-launch-"))
        cmd += ["--hostfile", normalized] if flavor == "openmpi" else ["-f", normalized]
    cmd += [python or sys.executable, "-m", "mpi4py", script, *map(str, args)]
    return cmd


def run(script, n, args=(), hostfile=None, timeout=None, capture=False, env=None):
    """Runs the job and waits; returns a ``subprocess.CompletedProcess`` (stdout/stderr as text
    when ``capture``). Past ``timeout`` seconds every process of the job is killed and
    ``subprocess.TimeoutExpired`` is raised."""
    with tempfile.TemporaryDirectory(prefix="aics-launch-") as tmp:
        cmd = command(script, n, args, hostfile, workdir=tmp)
        out = subprocess.PIPE if capture else None
        # A session of its own: on timeout we kill mpiexec and every rank it started, together.
        proc = subprocess.Popen(cmd, stdout=out, stderr=out, text=True, start_new_session=True,
                                env=env)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_job(proc)
            stdout, stderr = proc.communicate()
            raise subprocess.TimeoutExpired(cmd, timeout, output=stdout, stderr=stderr) from None
        except BaseException:
            _kill_job(proc)
            raise
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def _kill_job(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m aicslib.distribute.launch",
                                     description="Run a script as N MPI ranks (data-parallel training).")
    parser.add_argument("-n", "--np", dest="n", type=int, required=True, help="number of processes (ranks)")
    parser.add_argument("--hostfile", help="hosts to run on: 'host', 'host:slots' or 'host slots=N' per line")
    parser.add_argument("--timeout", type=float, default=None, help="kill the whole job after this many seconds")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    a = parser.parse_args(argv)
    try:
        result = run(a.script, a.n, a.args, a.hostfile, a.timeout)
    except LaunchError as e:
        print(f"aicslib.distribute.launch: error: {e}", file=sys.stderr)
        return 2
    except subprocess.TimeoutExpired:
        print(f"aicslib.distribute.launch: error: the job ran past --timeout {a.timeout:g}s; all "
              f"{a.n} ranks were killed.", file=sys.stderr)
        return 124
    if result.returncode != 0:
        print(f"aicslib.distribute.launch: error: the job failed (exit status {result.returncode}): "
              f"a rank raised an exception, was killed or exited with an error; see its output above. "
              f"The other ranks were stopped.", file=sys.stderr)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
