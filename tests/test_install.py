"""What a person meets after an install: one import root, the `sergeant-major` command, and no
name of ours that another package or a folder of theirs can shadow (issue 19)."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from sergeant_major_env.pages import FILES

pytestmark = pytest.mark.slow  # pytest -m "not slow" leaves this file out (issue 31)

ROOT = Path(__file__).resolve().parents[1]
SUBCOMMANDS = ("train", "evaluate", "play", "records", "distill", "exploit", "ship", "agents")


def _setuptools_is_new_enough() -> bool:
    try:
        import setuptools
    except ImportError:
        return False
    return int(setuptools.__version__.split(".")[0]) >= 77


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The project's wheel, built as a user would (pip wheel), outside the repository."""
    out = tmp_path_factory.mktemp("wheel")
    isolation = ["--no-build-isolation"] if _setuptools_is_new_enough() else []
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-w", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    [built] = out.glob("sergeant_major_env-*.whl")
    return built


def test_the_wheel_installs_exactly_one_top_level_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"sergeant_major_env"}
    for needed in ("sergeant_major_env/agents/__init__.py", "sergeant_major_env/agents/learned/policy.safetensors",
                   "sergeant_major_env/agents/learned/learned.json", "sergeant_major_env/agents/learned/ppo/learned.json",
                   "sergeant_major_env/agents/learned/ppo/policy.safetensors", "sergeant_major_env/training/ship.py",
                   "sergeant_major_env/agents/learned/ladder/r2/policy.safetensors",
                   "sergeant_major_env/agents/learned/ladder/r2/policy.json",
                   "sergeant_major_env/agents/learned/ladder/r2/learned.json",
                   "sergeant_major_env/cli/__init__.py", "sergeant_major_env/__main__.py",
                   *(f"sergeant_major_env/pages/{name}" for name in FILES)):
        assert needed in names, needed


def test_the_wheel_declares_the_sergeant_major_command(wheel):
    archive = zipfile.ZipFile(wheel)
    [entry_points] = [name for name in archive.namelist() if name.endswith(".dist-info/entry_points.txt")]
    text = archive.read(entry_points).decode()
    assert "[console_scripts]" in text and "sergeant-major = sergeant_major_env.cli:run" in text


def _package_folders() -> list[str]:
    """The site-packages folders of the running interpreter (a venv's, the system's, the user's),
    in its search order; not the checkout nor PYTHONPATH (they hold this repository's package)."""
    return [entry for entry in sys.path
            if Path(entry).name in ("site-packages", "dist-packages") and Path(entry).is_dir()]


def _see_the_running_packages(python: Path) -> None:
    """Let the venv of ``python`` import what the running interpreter imports (numpy,
    gymnasium, ...) after its own packages: a .pth file in its site-packages lists the running
    interpreter's. ``system_site_packages=True`` would not do: it shows the *base* interpreter's
    packages, and a test suite run from a venv (as most users run it) has its packages there."""
    where = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                           capture_output=True, text=True, timeout=120)
    assert where.returncode == 0, where.stderr
    folders = _package_folders()
    assert folders, sys.path
    (Path(where.stdout.strip()) / "zz_running_interpreter.pth").write_text("\n".join(folders) + "\n")


def test_the_wheel_venv_sees_the_running_interpreter_s_packages_and_not_the_checkout(tmp_path):
    """Issue 27: inside a venv, the wheel's venv saw the base interpreter's packages, not the
    running venv's (ModuleNotFoundError: gymnasium)."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    _see_the_running_packages(python)
    code = "import sys, gymnasium, numpy, pettingzoo; print(sys.path.index(sys.argv[1]))"
    done = subprocess.run([str(python), "-c", code, _package_folders()[0]], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": ""})
    assert done.returncode == 0, done.stderr
    code = "import sys, sysconfig; print(sys.path.index(sysconfig.get_path('purelib')))"
    own = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": ""})
    assert int(own.stdout) < int(done.stdout)  # the venv's own packages (the wheel's) come first


def test_a_wheel_install_outside_the_repository_has_the_command(wheel, tmp_path):
    """A fresh virtual environment (the running test environment's packages visible, ours not
    installed in it) with the wheel: `sergeant-major --help` lists the subcommands, `agents` lists the
    shipped agent, and a records round trip works, all from a folder far from the checkout."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                              "--no-index", str(wheel)], capture_output=True, text=True, timeout=600,
                             cwd=tmp_path, env={**os.environ, "PYTHONPATH": ""})  # not seeing the checkout
    if install.returncode != 0 and "no such option: --python" in install.stderr:
        pytest.skip("this pip cannot install into another environment (pip >= 22.3 needed)")
    assert install.returncode == 0, install.stderr[-2000:]
    _see_the_running_packages(python)  # after the install: pip must not see the checkout's own install
    work = tmp_path / "elsewhere"
    work.mkdir()
    command = env_dir / "bin" / "sergeant-major"

    def run(*argv):
        return subprocess.run([str(command), *argv], cwd=work, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONPATH": ""})

    shown = run("--help")
    assert shown.returncode == 0, shown.stderr
    assert all(f"  {name} " in shown.stdout for name in SUBCOMMANDS)
    where = subprocess.run([str(python), "-c", "import sergeant_major_env; print(sergeant_major_env.__file__)"],
                           cwd=work, capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": ""})
    assert Path(where.stdout.strip()).is_relative_to(env_dir), where.stdout
    listed = run("agents")
    assert listed.returncode == 0 and "learned" in listed.stdout and "heuristic" in listed.stdout
    assert run("records", "simulate", "--games", "2", "--option", "num_deals=1", "--out", "g.jsonl").returncode == 0
    checked = run("records", "check", "g.jsonl")
    assert checked.returncode == 0 and checked.stdout.strip() == "2 records OK"
    shipped = run("ship", "runs/mine")  # issue 27: not into the installed package (site-packages)
    assert shipped.returncode == 2 and "--into FOLDER is needed" in shipped.stderr.strip().splitlines()[-1]


def test_a_folder_with_its_own_agents_and_training_packages_shadows_nothing(tmp_path):
    """Run from a folder holding its own `agents/` and `training/` packages (as many projects
    do): our command and imports still find ours, since we install none of those names."""
    for name in ("agents", "training"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("raise ImportError('the user own package, not ours')\n")
    done = subprocess.run([sys.executable, "-m", "sergeant_major_env", "agents"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "heuristic" in done.stdout and "learned" in done.stdout
    code = "from sergeant_major_env.agents import make_agent; print(make_agent('heuristic').name)"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "heuristic", done.stderr


def test_help_lists_every_subcommand_and_python_m_is_the_same_command():
    done = subprocess.run([sys.executable, "-m", "sergeant_major_env", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0
    assert all(f"  {name} " in done.stdout for name in SUBCOMMANDS)
    for name in SUBCOMMANDS:
        sub = subprocess.run([sys.executable, "-m", "sergeant_major_env", name, "--help"], cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
        assert sub.returncode == 0 and "usage: sergeant-major " + name in sub.stdout, (name, sub.stderr[-500:])


def test_an_unknown_subcommand_is_one_line_naming_the_commands():
    done = subprocess.run([sys.executable, "-m", "sergeant_major_env", "trian"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "sergeant-major: error: unknown command 'trian'; commands: " + ", ".join(SUBCOMMANDS)
        + " (sergeant-major --help)"]
