"""``scripts/system_packages.sh`` (run by ``make test`` and ``.ci/run``): nothing to do when
everything is there; on a bare Debian installs what is missing with apt-get when allowed
(PostgreSQL, python3-venv and the Python headers, a C compiler and make among the rest); otherwise
stops at once with the one command to run."""

from __future__ import annotations

import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "system_packages.sh"


def fake_tools(folder: Path, uid: int) -> Path:
    """A PATH of its own: ``id`` answering ``uid``, an ``apt-get`` that logs its arguments, no sudo."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    (bin_dir / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    (bin_dir / "apt-get").write_text(f"#!/bin/sh\necho \"$@\" >> {folder / 'apt.log'}\n")
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    return bin_dir


#: Each thing the script looks for, by the name a test gives it: a file here, at the variable's path.
TOOLS = {"postgres": "POSTGRES_LIB", "pg_ctlcluster": "PG_CTLCLUSTER", "python": "PYTHON", "cc": "C_COMPILER",
         "make": "MAKE_TOOL", "chromium": "CHROMIUM", "nginx": "NGINX", "brotli.so": "BROTLI_MODULE",
         "msgfmt": "MSGFMT", "npm": "NPM", "redis-server": "REDIS_SERVER", "pgbouncer": "PGBOUNCER"}
EVERYTHING = set(TOOLS)
PACKAGES = ("postgresql python3-venv python3-dev gcc make chromium nginx libnginx-mod-http-brotli-static gettext npm "
            "redis-server pgbouncer")


def run(folder: Path, uid: int, present: set[str]) -> subprocess.CompletedProcess:
    """The script with the things ``present`` there and every other one missing: ``postgres`` is a
    server under a version's folder of PostgreSQL's, ``python`` a Python with ensurepip and its
    headers (missing: a Python that has neither, as Debian's python3 alone)."""
    env = {"PATH": str(fake_tools(folder, uid))}
    for name, variable in TOOLS.items():
        path = folder / name
        env[variable] = str(path)
        if name == "postgres":
            path = path / "15" / "bin" / "postgres"
            path.parent.mkdir(parents=True)
        if name in present or name == "python":
            path.write_text("#!/bin/sh\n" + ("" if name in present else "exit 1\n"))
            path.chmod(0o755)
    return subprocess.run(["/bin/sh", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=30)


def test_nothing_to_do_when_everything_is_there(tmp_path):
    result = run(tmp_path, 0, EVERYTHING)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert not (tmp_path / "apt.log").exists()


def test_root_installs_what_is_missing(tmp_path):
    result = run(tmp_path, 0, EVERYTHING - {"chromium", "pgbouncer", "cc"})
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "apt.log").read_text().splitlines() == ["update -q", "install -y -q gcc chromium pgbouncer"]


def test_a_bare_debian_gets_everything(tmp_path):
    result = run(tmp_path, 0, set())
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "apt.log").read_text().splitlines() == ["update -q", f"install -y -q {PACKAGES}"]


def test_postgresql_needs_its_server_and_its_cluster_tool(tmp_path):
    result = run(tmp_path, 0, EVERYTHING - {"pg_ctlcluster"})
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "apt.log").read_text().splitlines() == ["update -q", "install -y -q postgresql"]


def test_without_permission_it_stops_with_the_command_to_run(tmp_path):
    result = run(tmp_path, 1000, {"brotli.so"})
    assert result.returncode == 1
    assert f"sudo apt-get install -y {PACKAGES}" in result.stderr
    assert not (tmp_path / "apt.log").exists()
