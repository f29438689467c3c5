"""A throwaway MIT Kerberos realm for the GSSAPI tests (Kafka's tests have kafka.security.minikdc.MiniKdc).

Debian's krb5-kdc and krb5-admin-server (bin/run-tests.sh installs them): ``kdb5_util``
makes the realm's database in a temporary directory, ``kadmin.local`` its principals and
keytabs, and ``krb5kdc`` serves it on a free loopback port (TCP and UDP). Everything reads
the directory's own krb5.conf (KRB5_CONFIG) and kdc.conf (KRB5_KDC_PROFILE), never /etc.
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
from typing import Optional

from tests.integration.broker_harness import free_port, port_open, wait_until

REALM = "KAFKA-PY.TEST"
TOOLS = ("krb5kdc", "kdb5_util", "kadmin.local", "kinit")


def _find(tool: str) -> Optional[str]:
    return shutil.which(tool) or next((p for p in (f"/usr/sbin/{tool}", f"/usr/bin/{tool}")
                                       if os.access(p, os.X_OK)), None)


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if _find(tool) is None]


class MiniKdc:
    def __init__(self, workdir: pathlib.Path, realm: str = REALM) -> None:
        self.workdir = workdir
        self.realm = realm
        self.port = free_port()
        self.krb5_conf = workdir / "krb5.conf"
        self.kdc_conf = workdir / "kdc.conf"
        self._process: Optional[subprocess.Popen] = None
        self._log = workdir / "krb5kdc.out"

    @property
    def env(self) -> dict[str, str]:
        """What a process of the realm needs in its environment (its replay caches stay here too)."""
        return {"KRB5_CONFIG": str(self.krb5_conf), "KRB5_KDC_PROFILE": str(self.kdc_conf),
                "KRB5RCACHEDIR": str(self.workdir)}

    def _run(self, *args: str) -> str:
        result = subprocess.run([_find(args[0]) or args[0], *args[1:]], env=dict(os.environ, **self.env),
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed: {result.stdout}{result.stderr}")
        return result.stdout

    def start(self) -> "MiniKdc":
        d = self.workdir
        self.kdc_conf.write_text(f"""[kdcdefaults]
 kdc_ports = {self.port}
 kdc_tcp_ports = {self.port}
[realms]
 {self.realm} = {{
  database_name = {d}/principal
  key_stash_file = {d}/stash
  acl_file = {d}/kadm5.acl
  max_life = 1h
  max_renewable_life = 1h
  supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
 }}
[logging]
 kdc = FILE:{d}/kdc.log
""")
        self.krb5_conf.write_text(f"""[libdefaults]
 default_realm = {self.realm}
 dns_lookup_kdc = false
 dns_lookup_realm = false
 dns_canonicalize_hostname = false
 rdns = false
 udp_preference_limit = 1
 default_tkt_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
 default_tgs_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
[realms]
 {self.realm} = {{
  kdc = 127.0.0.1:{self.port}
 }}
""")
        (d / "kadm5.acl").write_text("")
        self._run("kdb5_util", "create", "-s", "-r", self.realm, "-P", "master-secret")
        with open(self._log, "wb") as out:
            self._process = subprocess.Popen([_find("krb5kdc"), "-n", "-r", self.realm],
                                             env=dict(os.environ, **self.env), stdout=out, stderr=subprocess.STDOUT)
        wait_until(lambda: port_open(self.port) or self._process.poll() is not None, 30,
                   lambda: f"krb5kdc did not listen on {self.port}: {self._log.read_text()}")
        if self._process.poll() is not None:
            raise RuntimeError(f"krb5kdc exited: {self._log.read_text()}")
        return self

    def create_principal(self, principal: str, keytab: pathlib.Path) -> pathlib.Path:
        """``principal`` with a random key, written to ``keytab``."""
        self._run("kadmin.local", "-r", self.realm, "-q", f"addprinc -randkey {principal}")
        self._run("kadmin.local", "-r", self.realm, "-q", f"ktadd -k {keytab} {principal}")
        return keytab

    def kinit(self, principal: str, keytab: pathlib.Path, ccache: pathlib.Path) -> str:
        """A TGT of ``principal`` in a private credential cache; its KRB5CCNAME."""
        name = f"FILE:{ccache}"
        subprocess.run([_find("kinit"), "-k", "-t", str(keytab), "-c", name, principal],
                       env=dict(os.environ, **self.env), check=True, capture_output=True, timeout=60)
        return name

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(10)
