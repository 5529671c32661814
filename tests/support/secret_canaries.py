"""Workspace files that hold credentials under names no list knows, with canary values.

Each value is fake but has the real format (or sits where a real one would), and is
unique, so a test can look for it in every request the scripted model received. The
files are the ones issue 41's corpus read unmasked: `.envrc`, `.aws/credentials`,
`.docker/config.json`, `.kube/config`, `prod.tfvars`, `.htpasswd`, `wp-config.php`, a
Django `settings.py`, and `.env` (masked by name; its history is not).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

AWS_ID = "AKIAQ7CANARY5EXAMPLE"
AWS_SECRET = "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"
GITHUB = "ghp_Canary0123456789abcdefghijABCDEFGHIJ"
SESSION = "IQoJb3JpZ2luX2VjEMr/canary0002/wEaCXVzLWVhc3QtMSJHMEUCIQ"
DOCKER_AUTH = "Y2FuYXJ5dXNlcjpDYW5hcnlQYXNzdzByZDAwMDM="
KUBE_KEY = "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpjYW5hcnkwMDA0"
KUBE_TOKEN = "kubeCanaryT0ken.0005.9f8e7d6c5b4a3f2e1d0c"
TF_PASSWORD = "Pr0d-Canary-Passw0rd-0006!"
TF_TOKEN = "tfc-Canary-0007-9f8e7d6c5b4a3f2e1d0c"
HTPASSWD = "$apr1$Cnry0008$L0r3mIpsumCanaryHash12"
WP_PASSWORD = "Wp-Canary-Pa55word-0009"
WP_KEY = "Canary|K3y;0010*random^stuff_xyz"
DJANGO = "django-insecure-canary#0011$9f8e7d6c5b4a"
STRIPE = "sk_live_Canary0012abcdefghijklmn"
DB_PASSWORD = "DbCanaryPw0013"
REMOTE_TOKEN = "ghp_Canary0014RemoteTokenABCDEFGHIJKLmnop"
GOOGLE = "AIzaSyCanary0015abcdefghijklmnopqrstuvw"
SLACK = "xoxb-123456789012-1234567890123-Canary0016AbCdEfGhIjKl"
PRIVATE_BODY = "MIIEpAIBAAKCAQEAcanary0017bodyLineOfTheKeyBlockABCDEF"

FILES = {
    ".envrc": f"export AWS_ACCESS_KEY_ID={AWS_ID}\nexport GITHUB_TOKEN={GITHUB}\n",
    ".aws/credentials": (
        f"[default]\naws_access_key_id = {AWS_ID}\naws_secret_access_key = {AWS_SECRET}\n"
        f"aws_session_token = {SESSION}\n"
    ),
    ".docker/config.json": (
        f'{{\n  "auths": {{\n    "registry.example.com": {{\n      "auth": "{DOCKER_AUTH}"\n'
        "    }\n  }\n}\n"
    ),
    ".kube/config": (
        "users:\n- name: admin\n  user:\n"
        f"    client-key-data: {KUBE_KEY}\n    token: {KUBE_TOKEN}\n"
    ),
    "prod.tfvars": (
        f'region = "eu-west-1"\ndb_password = "{TF_PASSWORD}"\napi_token = "{TF_TOKEN}"\n'
    ),
    ".htpasswd": f"admin:{HTPASSWD}\n",
    "wp-config.php": (
        "<?php\ndefine( 'DB_NAME', 'wordpress' );\n"
        f"define( 'DB_PASSWORD', '{WP_PASSWORD}' );\ndefine( 'AUTH_KEY', '{WP_KEY}' );\n"
    ),
    "site/settings.py": f"DEBUG = False\nSECRET_KEY = '{DJANGO}'\nALLOWED_HOSTS = []\n",
    "keys/deploy.txt": (
        f"-----BEGIN RSA PRIVATE KEY-----\n{PRIVATE_BODY}\n-----END RSA PRIVATE KEY-----\n"
    ),
    "notes/chat.md": f"google {GOOGLE}\nslack {SLACK}\n",
}
ENV = f"DEBUG=1\nSTRIPE_KEY={STRIPE}\nDATABASE_URL=postgres://app:{DB_PASSWORD}@db:5432/app\n"
CANARIES = {
    name: value
    for name, value in globals().items()
    if name.isupper() and isinstance(value, str) and name not in ("ENV",)
}
"""Every canary value by its name."""


def plant(workspace: Path) -> None:
    """Write `FILES` into `workspace` and make it a repository whose history holds `.env`.

    Commit 1 adds `.env`, commit 2 removes it (so `git show HEAD~1:.env` and `git log -p`
    read it); the remote's URL carries a token. Blocking.
    """
    for name, text in FILES.items():
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(workspace)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    (workspace / ".env").write_text(ENV, encoding="utf-8")
    subprocess.run([*git, "add", ".env"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "add env"], check=True)
    subprocess.run([*git, "rm", "-q", ".env"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "drop env"], check=True)
    url = f"https://x-access-token:{REMOTE_TOKEN}@github.com/o/r.git"
    subprocess.run([*git, "remote", "add", "origin", url], check=True)
