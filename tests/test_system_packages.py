"""``scripts/system_packages.sh`` (run by ``make test`` and ``.ci/run``): nothing to do when the
browser and nginx are there; installs what is missing with apt-get when allowed; otherwise stops
at once with the one command to run."""

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


def run(folder: Path, uid: int, present: set[str]) -> subprocess.CompletedProcess:
    paths = {name: folder / name for name in ("chromium", "nginx", "brotli.so", "msgfmt", "npm", "redis-server",
                                        "pgbouncer")}
    for name in present:
        paths[name].write_text("#!/bin/sh\n")
        paths[name].chmod(0o755)
    env = {"PATH": str(fake_tools(folder, uid)), "CHROMIUM": str(paths["chromium"]),
           "NGINX": str(paths["nginx"]), "BROTLI_MODULE": str(paths["brotli.so"]), "MSGFMT": str(paths["msgfmt"]),
           "NPM": str(paths["npm"]), "REDIS_SERVER": str(paths["redis-server"]),
           "PGBOUNCER": str(paths["pgbouncer"])}
    return subprocess.run(["/bin/sh", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=30)


def test_nothing_to_do_when_everything_is_there(tmp_path):
    result = run(tmp_path, 0, {"chromium", "nginx", "brotli.so", "msgfmt", "npm", "redis-server", "pgbouncer"})
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert not (tmp_path / "apt.log").exists()


def test_root_installs_what_is_missing(tmp_path):
    result = run(tmp_path, 0, {"nginx"})
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "apt.log").read_text().splitlines() == [
        "update -q", "install -y -q chromium libnginx-mod-http-brotli-static gettext npm redis-server pgbouncer"]


def test_without_permission_it_stops_with_the_command_to_run(tmp_path):
    result = run(tmp_path, 1000, {"brotli.so"})
    assert result.returncode == 1
    assert "sudo apt-get install -y chromium nginx libnginx-mod-http-brotli-static gettext npm redis-server pgbouncer" \
        in result.stderr
    assert not (tmp_path / "apt.log").exists()
