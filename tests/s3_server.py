"""A real S3 API on loopback for tests: moto's server in a subprocess on a free port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "studio-test", "AWS_SECRET_ACCESS_KEY": "studio-test-secret",
               "AWS_DEFAULT_REGION": "us-east-1"}
REGION = "us-east-1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def moto_server() -> Iterator[str]:
    """Start ``moto.server`` on 127.0.0.1 and yield its endpoint URL; stop it afterwards."""
    port = _free_port()
    env = {**os.environ, **CREDENTIALS}
    process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.time() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            break
        except OSError:
            if process.poll() is not None or time.time() > deadline:
                process.kill()
                raise RuntimeError("the S3 test server did not start") from None
            time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def client(endpoint: str):
    import boto3

    return boto3.client("s3", endpoint_url=endpoint, region_name=REGION,
                        aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                        aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"])


def new_bucket(endpoint: str) -> str:
    name = f"studio-{uuid.uuid4().hex[:12]}"
    client(endpoint).create_bucket(Bucket=name)
    return name


def keys(endpoint: str, bucket: str) -> list[str]:
    listing = client(endpoint).list_objects_v2(Bucket=bucket)
    return sorted(item["Key"] for item in listing.get("Contents", []))


def storage_settings(endpoint: str, bucket: str) -> dict:
    """``STORAGES['default']`` as settings.py builds it from STUDIO_S3_* variables."""
    return {"BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {"bucket_name": bucket, "endpoint_url": endpoint, "region_name": REGION,
                        "addressing_style": "path", "file_overwrite": False, "default_acl": None,
                        "querystring_auth": True}}
