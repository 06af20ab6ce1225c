"""Production settings: `manage.py check --deploy` passes with secrets and hosts from the environment."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_check(extra_env: dict) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env.update({"DJANGO_SETTINGS_MODULE": "checkers_site.settings", **extra_env})
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=ROOT, env=env, capture_output=True, text=True)


def test_production_settings_pass_check_deploy():
    result = run_check({"DJANGO_SECRET_KEY": secrets.token_urlsafe(50), "DJANGO_SECURE": "1",
                        "DJANGO_ALLOWED_HOSTS": "checkers.example"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_without_https_settings_fails_check_deploy():
    result = run_check({"DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
                        "DJANGO_ALLOWED_HOSTS": "checkers.example"})
    assert result.returncode != 0
    assert "security.W004" in result.stderr + result.stdout  # no HSTS


def test_production_refuses_to_start_without_a_secret_key():
    result = run_check({"DJANGO_ALLOWED_HOSTS": "checkers.example", "DJANGO_SECURE": "1"})
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr
