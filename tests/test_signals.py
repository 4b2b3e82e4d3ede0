"""Stop signals: Ctrl-C (SIGINT), ``kill`` (SIGTERM) and a closed terminal (SIGHUP) take one path.

The mechanism is :mod:`sergeant_major_env.interrupts`: while :func:`handled` is active (every
``sergeant-major`` command runs under it, installed before its module is imported) SIGTERM
and SIGHUP raise a KeyboardInterrupt that remembers its signal. So each command and its
workers clean up as for Ctrl-C: the worker processes are stopped and joined, temporary
files are removed, one line is printed, and the exit status is 128 + the signal's number
(130, 143, 129). Workers also die with their parent (SIGKILL cannot be caught).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import default_stop_signals
from sergeant_major_env import interrupts
from sergeant_major_env.files import atomic_write
from sergeant_major_env.interrupts import Interrupted, exit_status, handled
from sergeant_major_env.processes import can_fork, run_jobs
from sergeant_major_env.records import simulate, write_jsonl

ROOT = Path(__file__).resolve().parents[1]
STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
needs_fork = pytest.mark.skipif(not can_fork(), reason="worker processes need the fork start method")


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "sergeant_major_env", *args]


def one_line(stderr: str) -> str:
    """The only line on stderr (no traceback)."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux's /proc: no psutil needed)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(condition, seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def stop_signals_at_default():
    """SIGINT, SIGTERM and SIGHUP at their defaults in this process for one test, put back after.
    A suite run in the background (``nohup python -m pytest ... &``) starts with SIGINT and
    SIGHUP ignored, and :func:`handled` rightly keeps an ignored signal ignored."""
    previous = {number: signal.getsignal(number) for number in STATUS}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    try:
        yield
    finally:
        for number, handler in previous.items():
            if handler is not None:  # None: set outside Python, cannot be put back from here
                signal.signal(number, handler)


# ============================================================================ the mechanism, in this process

@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_raise_a_keyboard_interrupt_that_names_them(stop_signals_at_default, number):
    before = signal.getsignal(number)
    with pytest.raises(KeyboardInterrupt) as caught:
        with handled():
            os.kill(os.getpid(), number)
            time.sleep(5)  # the signal arrives first
    assert isinstance(caught.value, Interrupted) and caught.value.signal == number
    assert exit_status(caught.value) == STATUS[number]
    assert interrupts.describe(caught.value) == f"interrupted ({signal.Signals(number).name})"
    assert signal.getsignal(number) is before  # put back on the way out


def test_ctrl_c_is_exit_status_130():
    assert exit_status(KeyboardInterrupt()) == 130
    assert interrupts.describe(KeyboardInterrupt()) == "interrupted (SIGINT)"


def test_a_signal_ignored_from_the_start_stays_ignored():
    """nohup starts a command with SIGHUP ignored: a closed terminal must not stop it then."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with handled():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(0.2)  # nothing raised
    finally:
        signal.signal(signal.SIGHUP, previous)


@pytest.mark.parametrize("argv, started", [
    (["python", "/venv/bin/sergeant-major", "evaluate", "--games", "6"], "sergeant-major evaluate"),
    (["python", "/venv/bin/sergeant-major", "--help"], "sergeant-major"),
    (["python", "-m", "sergeant_major_env", "distill", "labels"], "sergeant-major distill"),
    (["python", "-u", "-Im", "sergeant_major_env", "agents"], "sergeant-major agents"),
    (["python", "-W", "ignore", "-X", "dev", "-msergeant_major_env.__main__", "play"], "sergeant-major play"),
    (["python", "/repo/train.py", "--name", "quick"], "sergeant-major train"),
    (["python", "-m", "pytest", "-q"], None),
    (["python", "-c", "import sergeant_major_env", "-m", "sergeant_major_env"], None),
    (["python", "-m", "sergeant_major_env.training.ship"], None),
    (["python", "/elsewhere/train.py"], None),
    (["python", "my_script.py", "evaluate"], None),
    (["python", "-"], None),
    (["python"], None),
])
def test_the_command_is_told_from_a_program_that_imports_the_package(argv, started):
    """Only the command itself gets the handlers of its first moments (its one line, then exit):
    a program or a test suite that imports the package keeps Python's own Ctrl-C."""
    assert interrupts.command_started(argv, "/repo/sergeant_major_env") == started


@needs_fork
def test_a_forked_child_takes_the_signal_s_default_action():
    """A worker forked while the handlers are installed ends on SIGTERM, as without them."""
    with handled():
        pid = os.fork()
        if pid == 0:  # the child: it must die of the signal, not raise
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
            finally:
                os._exit(3)
        _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
def test_atomic_write_removes_its_temporary_file_on_a_stop_signal(stop_signals_at_default, tmp_path, number):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    with pytest.raises(Interrupted):
        with handled(), atomic_write(target) as file:
            file.write("half of the new content")
            os.kill(os.getpid(), number)
            time.sleep(5)
    assert [path.name for path in tmp_path.iterdir()] == ["out.txt"]
    assert target.read_text() == "old\n"


def _sleeps(job, on_deals):
    on_deals(1)
    time.sleep(60)
    return job


@needs_fork
def test_run_jobs_stops_and_joins_its_workers_on_sigterm():
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGTERM))
    start = time.monotonic()
    with handled():
        timer.start()
        with pytest.raises(Interrupted):
            run_jobs(_sleeps, list(range(4)), 2)
    timer.join()
    assert time.monotonic() - start < 30
    assert multiprocessing.active_children() == []


# ============================================================================ the commands

EVALUATE = command("evaluate", "--agents", "heuristic,heuristic,heuristic", "--games", "600", "--workers", "2",
                   "--option", "num_deals=2")


@needs_fork
@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_stop_signal_to_evaluate_stops_its_workers(tmp_path, number):
    """Issue 20: SIGTERM left both workers playing (181 s later). Now: one line, 143 (129, 130),
    and no worker left."""
    process = subprocess.Popen(EVALUATE + ["--json", str(tmp_path / "r.json")], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, preexec_fn=default_stop_signals)
    try:
        assert wait_until(lambda: len(children(process.pid)) >= 2), "no workers started"
        workers = children(process.pid)
        process.send_signal(number)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == STATUS[number], err
    line = one_line(err)
    assert line == f"sergeant-major evaluate: interrupted ({signal.Signals(number).name}); no results written"
    assert wait_until(lambda: not any(map(alive, workers)), 5), [w for w in workers if alive(w)]
    assert list(tmp_path.iterdir()) == []


@needs_fork
def test_workers_die_with_a_killed_evaluate():
    """SIGKILL cannot be caught: the workers end by themselves (Linux's parent-death signal)."""
    process = subprocess.Popen(EVALUATE, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: len(children(process.pid)) >= 2), "no workers started"
        workers = children(process.pid)
        process.kill()
        process.wait(timeout=30)
    finally:
        process.kill()
    assert wait_until(lambda: not any(map(alive, workers)), 5), [w for w in workers if alive(w)]


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_to_records_simulate_leaves_no_temporary_file(tmp_path, number):
    """Issue 20: SIGTERM or SIGHUP exited without a word and left an 18 MB .tmp file."""
    out = tmp_path / "games.jsonl"
    process = subprocess.Popen(command("records", "simulate", "--games", "1000000", "--out", str(out)), cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=default_stop_signals)
    try:
        assert wait_until(lambda: any(tmp_path.glob("*.tmp"))), "no temporary file appeared"
        time.sleep(0.3)  # some records in it
        process.send_signal(number)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == STATUS[number], err
    assert one_line(err) == (f"sergeant-major records simulate: interrupted ({signal.Signals(number).name}): "
                             f"{out} not written")
    assert list(tmp_path.iterdir()) == []


# A signal at a chosen point, the same at every run: the preamble sends it to this process
# when the named module starts importing, or when the records' replay starts.
_AT_IMPORT = """
import os, runpy, signal, sys

class SignalAtImport:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), {number})
        return None

sys.meta_path.insert(0, SignalAtImport())
"""

_AT_CHECK = """
import os, runpy, signal, sys
import sergeant_major_env.records as records

replay = records.check_records

def check_records(values):
    os.kill(os.getpid(), {number})
    return replay(values)

records.check_records = check_records
"""

_RUN = """
sys.argv = ["sergeant-major", *sys.argv[1:]]
runpy.run_module("sergeant_major_env", run_name="__main__")
"""


def run_with(preamble: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", preamble + _RUN, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, preexec_fn=default_stop_signals)


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_while_evaluate_imports_is_one_line(number):
    """Issue 20: Ctrl-C while evaluate imported its modules printed a traceback."""
    done = run_with(_AT_IMPORT.format(module="sergeant_major_env.agents", number=int(number)),
                    "evaluate", "--games", "6", "--no-progress")
    assert done.returncode == STATUS[number], done.stderr
    assert one_line(done.stderr) == f"sergeant-major evaluate: interrupted ({signal.Signals(number).name})"
    assert done.stdout == ""


# The package's own imports (numpy, gymnasium, ...: the first ~0.3 s of every command) come before
# the dispatcher's handlers; issue 27: a Ctrl-C there printed a traceback, SIGTERM and SIGHUP
# ended the command silently.
_AT_NUMPY = """
import os, sys

class SignalAtImport:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), {number})
        return None

sys.meta_path.insert(0, SignalAtImport())
"""


def launchers() -> list[list[str]]:
    """The ways to start the command: the installed console script (when there is one beside
    this interpreter) and ``python -m sergeant_major_env``."""
    script = Path(sys.executable).parent / "sergeant-major"
    return ([[str(script)]] if script.exists() else []) + [[sys.executable, "-m", "sergeant_major_env"]]


@pytest.mark.parametrize("launcher", launchers(), ids=lambda argv: Path(argv[-1]).name)
@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_while_the_package_loads_is_one_line(tmp_path, launcher, number):
    """The signal comes when the package starts importing numpy (a sitecustomize sends it): the
    command's one line and 130 (143, 129), no traceback, nothing on stdout."""
    (tmp_path / "sitecustomize.py").write_text(_AT_NUMPY.format(number=int(number)))
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    done = subprocess.run([*launcher, "evaluate", "--agents", "random,random,random", "--games", "6"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": path},
                          preexec_fn=default_stop_signals)
    assert done.returncode == STATUS[number], done.stderr
    assert one_line(done.stderr) == f"sergeant-major evaluate: interrupted ({signal.Signals(number).name})"
    assert done.stdout == ""


def numpy_loading(pid: int) -> bool:
    """Whether process ``pid`` has started loading numpy (its compiled core is mapped)."""
    try:
        return "_multiarray_umath" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("delay", [0.0, 0.1, 0.2])
@pytest.mark.parametrize("name, argv", [
    ("evaluate", ["evaluate", "--agents", "random,random,random", "--games", "600"]),
    ("distill", ["distill", "labels", "--games", "600", "--teacher", "heuristic", "--player", "heuristic"]),
])
def test_ctrl_c_in_the_first_moments_of_a_command_is_one_line(tmp_path, delay, name, argv):
    """Ctrl-C at a real moment of the start (``delay`` seconds after numpy starts loading, the
    package's imports then the command's): one line, 130, no traceback (issue 27)."""
    if name == "distill":
        argv = [*argv, "--out", str(tmp_path / "labels")]
    process = subprocess.Popen([*launchers()[0], *argv], cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, preexec_fn=default_stop_signals)
    try:
        assert wait_until(lambda: numpy_loading(process.pid) or process.poll() is not None, 60)
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert one_line(err).startswith(f"sergeant-major {name}: interrupted (SIGINT)")
    assert not (tmp_path / "labels").exists() or not any((tmp_path / "labels").glob("*.tmp"))


def test_ctrl_c_during_records_check_is_one_line(tmp_path):
    """Issue 20: Ctrl-C while `records check` replayed a large file printed a traceback."""
    path = tmp_path / "games.jsonl"
    write_jsonl(simulate(3, seed=0), path)
    done = run_with(_AT_CHECK.format(number=int(signal.SIGINT)), "records", "check", str(path))
    assert done.returncode == 130, done.stderr
    assert one_line(done.stderr) == (f"sergeant-major records check: interrupted (SIGINT) after 0 records "
                                     f"(0 with problems) of {path}")


def test_a_closed_terminal_during_play_is_one_line_and_129():
    process = subprocess.Popen(command("play", "--opponents", "random,random", "--seed", "1"), cwd=ROOT,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=default_stop_signals)
    try:
        seen = ""
        while "your move" not in seen:  # the game waits for the person
            character = process.stdout.read(1)
            assert character, process.stderr.read()
            seen += character
        process.send_signal(signal.SIGHUP)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 129, err
    assert err == ""
    assert out.strip().splitlines()[-1] == "Interrupted by SIGHUP (seed 1)."


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_to_play_web_names_it_and_exits_with_its_status(number):
    """Issue 27: `play --web` said "stopped (Ctrl-C)." and exited 130 on SIGTERM and SIGHUP too."""
    process = subprocess.Popen(command("play", "--web", "--no-browser", "--opponents", "random,random", "--option",
                                       "num_deals=1"), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, preexec_fn=default_stop_signals)
    try:
        assert process.stdout.readline().startswith("3-5-8 in your browser: http://127.0.0.1:")
        process.send_signal(number)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == STATUS[number], err
    assert out.strip() == f"stopped ({signal.Signals(number).name})." and err == ""


def test_every_command_runs_under_the_handlers(monkeypatch):
    """The dispatcher installs the handlers before importing a subcommand's module."""
    from sergeant_major_env import cli

    seen = {}

    def fake_import(name):
        seen["handler"] = signal.getsignal(signal.SIGTERM)
        raise Interrupted(signal.SIGTERM)

    monkeypatch.setattr(cli.importlib, "import_module", fake_import)
    assert cli.main(["records", "check", "x"]) == 143
    assert callable(seen["handler"]) and seen["handler"] not in (signal.SIG_DFL, signal.SIG_IGN)


def test_a_command_that_reports_its_own_interruption_gets_no_second_line(monkeypatch, capsys):
    """A command that catches the interruption and returns its status has said its line."""
    from sergeant_major_env import cli

    class Command:
        @staticmethod
        def main(argv):
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
            except KeyboardInterrupt:
                print("records: stopped, nothing written", file=sys.stderr)
                return 130  # a command that does not use interrupts.exit_status
            return 0

    monkeypatch.setattr(cli.importlib, "import_module", lambda name: Command)
    assert cli.main(["records"]) == 130
    assert capsys.readouterr().err.splitlines() == ["records: stopped, nothing written"]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the lost exception, on purpose
def test_a_signal_whose_exception_was_lost_still_stops_with_its_status(stop_signals_at_default, monkeypatch, capsys):
    """An exception raised where Python ignores it (a __del__, a fork handler) loses the
    signal; the command's status and line still say it came."""
    from sergeant_major_env import cli

    class Swallowed:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(5)  # the Interrupted raised here is ignored by Python

    class Command:
        @staticmethod
        def main(argv):
            Swallowed()  # deleted at once
            return 0

    monkeypatch.setattr(cli.importlib, "import_module", lambda name: Command)
    assert cli.main(["evaluate"]) == 129
    assert capsys.readouterr().err.splitlines()[-1] == "sergeant-major evaluate: interrupted (SIGHUP)"


def test_the_console_script_ends_at_once_after_a_stop_signal(monkeypatch):
    """After a stop signal (status 128 + its number) ``run`` ends the process with ``os._exit``,
    so that no finalizer of an interrupted compile (llvmlite's half-made objects) prints a
    traceback at the interpreter's exit (a CI run saw one after the command's one line); any
    other status is an ordinary ``sys.exit``."""
    from sergeant_major_env import cli

    ended = []

    class Ended(Exception):
        pass

    def end_at_once(status):
        ended.append(status)
        raise Ended

    monkeypatch.setattr(cli.os, "_exit", end_at_once)
    monkeypatch.setattr(cli, "main", lambda argv=None: 128 + signal.SIGHUP)
    with pytest.raises(Ended):
        cli.run(["records"])
    assert ended == [128 + signal.SIGHUP]
    monkeypatch.setattr(cli, "main", lambda argv=None: 2)
    with pytest.raises(SystemExit) as exit_:
        cli.run(["records"])
    assert exit_.value.code == 2 and ended == [128 + signal.SIGHUP]
