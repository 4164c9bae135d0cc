"""Starts the real sealbox-server binary on a loopback port and drives it with the
real `sealbox` CLI. Used by the end-to-end tests in this folder.

SEALBOX_E2E_SERVER and SEALBOX_E2E_CLI, when set, are the command lines to run
instead of the Bazel-built binaries: `tools/dev test` runs these tests against the
arm64 build under qemu-aarch64 that way ("qemu-aarch64 -L ROOTFS .../sealbox-server").

SEALBOX_E2E_BACKEND=etcd runs every Server on etcd instead of a data directory: one
real etcd (Debian's etcd-server) started for the test process, and a prefix per
data directory name, so servers given the same data_dir share a keystore as they do
on the file backend.
"""
import atexit
import contextlib
import fcntl
import hashlib
import importlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

SERVER = shlex.split(os.environ.get("SEALBOX_E2E_SERVER", "")) or [
    os.path.abspath("server/sealbox-server")]
CLI = shlex.split(os.environ.get("SEALBOX_E2E_CLI", "")) or [os.path.abspath("client/sealbox")]


PROTO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../proto")


def load_stubs(*names):
    """The gRPC stubs of sealbox/v1/NAME.proto for each NAME ("data", "admin"), compiled
    into a temporary folder: (NAME_pb2, NAME_pb2_grpc, ...) in the order given."""
    from grpc_tools import protoc  # only the tests that make raw gRPC calls need it
    out = tempfile.mkdtemp(prefix="sealbox-stubs-", dir=os.environ.get("TEST_TMPDIR"))
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    for name in names:
        rc = protoc.main(["protoc", f"-I{PROTO_DIR}", f"-I{include}", f"--python_out={out}",
                          f"--grpc_python_out={out}",
                          os.path.join(PROTO_DIR, f"sealbox/v1/{name}.proto")])
        if rc != 0:
            raise RuntimeError(f"protoc failed on {name}.proto")
    sys.path.insert(0, out)
    return tuple(importlib.import_module(f"sealbox.v1.{name}{suffix}")
                 for name in names for suffix in ("_pb2", "_pb2_grpc"))


def wait_for(condition, what, seconds=20):
    """Polls `condition` until it is true; AssertionError naming `what` after `seconds`."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"not within {seconds} s: {what}")


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def write_random(path, size):
    """`size` random bytes into `path`, a MiB at a time."""
    with open(path, "wb") as f:
        for offset in range(0, size, 1 << 20):
            f.write(os.urandom(min(1 << 20, size - offset)))


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextlib.contextmanager
def go_build_cache(fallback):
    """The GOCACHE for a Go build: tools/dev's one cache for the whole run
    (SEALBOX_GOCACHE), held alone while the build runs, so that two tests starting at
    once do not both compile grpc-go (the second finds it compiled); else `fallback`."""
    shared = os.environ.get("SEALBOX_GOCACHE")
    if not shared:
        yield fallback
        return
    os.makedirs(shared, exist_ok=True)
    with open(shared.rstrip("/") + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield shared


def java_classpaths():
    """The Java library's classpath and the example client's, from the jars
    //client/examples/java:jars built (with client/examples/java/build.sh) into the
    runfiles: (library, example)."""
    jars = "client/examples/java"
    with open(os.path.join(jars, "classpath")) as f:
        library = os.path.join(jars, "sealbox-client.jar") + ":" + f.read().strip()
    return library, os.path.join(jars, "sealbox-example.jar") + ":" + library


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


class Pki:
    """Certificates made by the openssl command in a temporary folder: self-signed
    CAs, and certificates they issue (P-256, valid two days)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="sealbox-pki-", dir=os.environ.get("TEST_TMPDIR"))

    def path(self, name):
        return os.path.join(self.dir, name)

    def make_ca(self, name, common_name):
        """A self-signed CA: (certificate path, key path)."""
        cert, key = self.path(name + ".pem"), self.path(name + ".key")
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-nodes", "-keyout", key, "-out", cert, "-days", "2",
                "-subj", "/CN=" + common_name)
        return cert, key

    def issue(self, name, subject, extension, ca, ca_key):
        """NAME.pem and NAME.key, signed by `ca`, with one extension line."""
        key, csr, cert = self.path(name + ".key"), self.path(name + ".csr"), self.path(name + ".pem")
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", key, "-out", csr, "-subj", subject)
        ext = self.path(name + ".ext")
        with open(ext, "w") as f:
            f.write(extension + "\n")
        openssl("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key,
                "-CAcreateserial", "-out", cert, "-days", "2", "-extfile", ext)
        return cert, key


ETCD_BACKEND = os.environ.get("SEALBOX_E2E_BACKEND", "file") == "etcd"


def free_port():
    """A loopback port free right now (the kernel's pick)."""
    return free_ports(1)[0]


def free_ports(count):
    """`count` different loopback ports, free right now. Bound all at once: ports
    picked one by one, each socket closed before the next, may repeat (two etcd
    members were once given the same client port)."""
    import socket
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class Etcd:
    """Real etcd members on loopback ports, each with a fresh data directory: Debian's
    etcd-server. `members` > 1 makes a cluster; a member can be killed, stopped
    (SIGSTOP) and started again."""

    def __init__(self, members=1, extra_args=()):
        self.home = tempfile.mkdtemp(prefix="sealbox-etcd-", dir=os.environ.get("TEST_TMPDIR"))
        self.names = [f"m{i}" for i in range(members)]
        ports = free_ports(2 * members)
        self.client_ports, self.peer_ports = ports[:members], ports[members:]
        self.extra_args = list(extra_args)
        self.processes = [None] * members
        self.logs = [None] * members
        self.scheme = "http"

    @property
    def endpoints(self):
        return ",".join(f"127.0.0.1:{port}" for port in self.client_ports)

    def member_endpoint(self, i):
        return f"127.0.0.1:{self.client_ports[i]}"

    def start(self, seconds=30):
        for i in range(len(self.names)):
            self.start_member(i, initial=True)
        self.wait_healthy(range(len(self.names)), seconds)
        return self

    def start_member(self, i, initial=False):
        cluster = ",".join(f"{n}=http://127.0.0.1:{p}" for n, p in zip(self.names, self.peer_ports))
        client_url = f"{self.scheme}://127.0.0.1:{self.client_ports[i]}"
        peer_url = f"http://127.0.0.1:{self.peer_ports[i]}"
        self.logs[i] = open(os.path.join(self.home, f"{self.names[i]}.log"), "a")
        self.processes[i] = subprocess.Popen(
            ["/usr/bin/etcd", "--name", self.names[i],
             "--data-dir", os.path.join(self.home, self.names[i]),
             "--listen-client-urls", client_url, "--advertise-client-urls", client_url,
             "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
             "--initial-cluster", cluster,
             "--initial-cluster-state", "new" if initial else "existing",
             "--logger", "zap", "--log-level", "warn"] + self.extra_args,
            stdout=self.logs[i], stderr=subprocess.STDOUT)

    def run_etcdctl(self, *args, endpoints=None, input=None):
        """etcdctl (v3 API) against the cluster: the CompletedProcess. `input`: bytes
        for its stdin (a password it reads there)."""
        return subprocess.run(
            ["/usr/bin/etcdctl", "--endpoints", endpoints or self.endpoints,
             "--dial-timeout", "2s", "--command-timeout", "5s"] + self.tls_args() + list(args),
            capture_output=True, env=dict(os.environ, ETCDCTL_API="3"), timeout=30,
            input=input)

    def etcdctl(self, *args, endpoints=None, input=None):
        """etcdctl's stdout; AssertionError with its stderr when it fails."""
        result = self.run_etcdctl(*args, endpoints=endpoints, input=input)
        if result.returncode != 0:
            raise AssertionError(f"etcdctl {' '.join(args)}: {result.stderr.decode()}")
        return result.stdout.decode()

    def wait_healthy(self, members, seconds=30):
        # `endpoint health` exits 0 only when every endpoint given is healthy.
        endpoints = ",".join(self.member_endpoint(i) for i in members)
        wait_for(lambda: self.run_etcdctl("endpoint", "health",
                                          endpoints=endpoints).returncode == 0,
                 "etcd is healthy", seconds)

    def tls_args(self):
        return []

    def revision(self):
        """etcd's current revision."""
        status = json.loads(self.etcdctl("endpoint", "status", "-w", "json"))
        return max(entry["Status"]["header"]["revision"] for entry in status)

    def leader(self):
        """The index of the member that is leader now."""
        status = json.loads(self.etcdctl("endpoint", "status", "-w", "json"))
        for entry in status:
            if entry["Status"]["header"]["member_id"] == entry["Status"].get("leader"):
                port = int(entry["Endpoint"].rsplit(":", 1)[1])
                return self.client_ports.index(port)
        raise AssertionError("no etcd leader")

    def kill(self, i, sig=signal.SIGKILL):
        process = self.processes[i]
        if process and process.poll() is None:
            process.send_signal(sig)
            if sig in (signal.SIGKILL, signal.SIGTERM):
                process.wait(timeout=30)

    def close(self):
        for i, process in enumerate(self.processes):
            if process and process.poll() is None:
                process.send_signal(signal.SIGCONT)
                process.kill()
                process.wait(timeout=30)
            if self.logs[i]:
                self.logs[i].close()


_shared_etcd = None


def shared_etcd():
    """The one etcd of this test process (SEALBOX_E2E_BACKEND=etcd), started on first use."""
    global _shared_etcd
    if _shared_etcd is None:
        _shared_etcd = Etcd().start()
        atexit.register(_shared_etcd.close)
    return _shared_etcd


class SoftHsm:
    """A SoftHSM2 token of the test's own (Debian's softhsm2), in a temporary directory
    named by SOFTHSM2_CONF in `env`, with its keys made by opensc's pkcs11-tool as an
    operator makes them. Removed with the test's temporary directory."""

    MODULE = "/usr/lib/%s-linux-gnu/softhsm/libsofthsm2.so" % os.uname().machine.replace(
        "arm64", "aarch64")

    def __init__(self, token="sealbox", pin="4711-test-pin"):
        self.home = tempfile.mkdtemp(prefix="sealbox-hsm-", dir=os.environ.get("TEST_TMPDIR"))
        self.token_dir = os.path.join(self.home, "tokens")
        os.mkdir(self.token_dir)
        conf = os.path.join(self.home, "softhsm2.conf")
        with open(conf, "w") as f:
            f.write(f"directories.tokendir = {self.token_dir}\nobjectstore.backend = file\n")
        self.env = {"SOFTHSM2_CONF": conf}
        self.token, self.pin = token, pin
        self.pin_file = os.path.join(self.home, "pin")
        with open(self.pin_file, "w") as f:
            f.write(pin + "\n")
        self.run("softhsm2-util", "--init-token", "--free", "--label", token, "--pin", pin,
                 "--so-pin", "so-" + pin)

    def run(self, *args):
        result = subprocess.run(list(args), capture_output=True, text=True, timeout=60,
                                env=dict(os.environ, **self.env))
        if result.returncode != 0:
            raise AssertionError(f"{args[0]} failed: {result.stdout}{result.stderr}")
        return result.stdout

    def tool(self, *args):
        """pkcs11-tool on this token, logged in."""
        return self.run("pkcs11-tool", "--module", self.MODULE, "--token-label", self.token,
                        "--login", "--pin", self.pin, *args)

    def make_key(self, label, extractable=False):
        """An AES-256 key on the token: sensitive, and extractable only if asked."""
        self.tool("--keygen", "--key-type", "AES:32", "--label", label, "--sensitive",
                  *(["--extractable"] if extractable else []))

    def server_args(self, key_label, pin_file=None):
        return ["--hsm-module", self.MODULE, "--hsm-token", self.token, "--hsm-key", key_label,
                "--hsm-pin-file", pin_file or self.pin_file]

    def unseal(self, sealed, key_label):
        """The KEK in a sealed KEK (docs/FORMAT.md), unsealed with PyKCS11 (Debian's
        python3-pykcs11), independently of sealbox: what anyone holding the HSM key and
        its PIN could do."""
        import PyKCS11
        current = proto_fields(proto_fields(sealed)[2])
        fingerprint, blob = current[1], current[3]
        os.environ["SOFTHSM2_CONF"] = self.env["SOFTHSM2_CONF"]
        lib = PyKCS11.PyKCS11Lib()
        lib.load(self.MODULE)
        slot = next(s for s in lib.getSlotList(tokenPresent=True)
                    if lib.getTokenInfo(s).label.strip() == self.token)
        session = lib.openSession(slot)
        try:
            session.login(self.pin)
            key = session.findObjects([(PyKCS11.CKA_CLASS, PyKCS11.CKO_SECRET_KEY),
                                       (PyKCS11.CKA_LABEL, key_label)])[0]
            mechanism = PyKCS11.AES_GCM_Mechanism(
                blob[:12], b"sealbox/v1/sealed-kek" + fingerprint, 128)
            return bytes(session.decrypt(key, blob[12:], mechanism)), fingerprint
        finally:
            session.closeSession()


def proto_fields(data):
    """The fields of a protobuf message by number (the last of each), for the few the
    tests read without the schema: varints as ints, length-delimited as bytes."""
    fields, i = {}, 0
    def varint():
        nonlocal i
        value, shift = 0, 0
        while True:
            byte = data[i]
            i += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value
    while i < len(data):
        tag = varint()
        if tag & 7 == 0:
            fields[tag >> 3] = varint()
        elif tag & 7 == 2:
            size = varint()
            fields[tag >> 3] = data[i:i + size]
            i += size
        else:
            raise ValueError(f"wire type {tag & 7} not expected")
    return fields


def kek_fingerprint(kek):
    """HMAC-SHA256(KEK, "sealbox/v1/kek-fingerprint")[0:16] (docs/FORMAT.md)."""
    import hmac
    return hmac.new(kek, b"sealbox/v1/kek-fingerprint", hashlib.sha256).digest()[:16]


def read_status(pid, field):
    """A /proc/PID/status field in KiB (VmRSS, VmHWM)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


class Server:
    """One sealbox-server process with its own home: KEK, admin token, log and (unless
    given one) data directory. Several may share a data directory (give them the same
    `kek` and `admin_token`), and one may be started again after a stop or a kill."""

    def __init__(self, data_dir=None, extra_args=(), kek=None, admin_token=None,
                 wrapper=(), etcd=None, prefix=None, env=None, hsm=None, hsm_key="sealbox-root"):
        self.home = tempfile.mkdtemp(prefix="sealbox-e2e-", dir=os.environ.get("TEST_TMPDIR"))
        self.data_dir = data_dir or os.path.join(self.home, "data")
        # On etcd: this Etcd (or the shared one), under a prefix named after data_dir.
        self.etcd = etcd or (shared_etcd() if ETCD_BACKEND else None)
        self.prefix = prefix or (
            "/e2e-" + hashlib.sha256(self.data_dir.encode()).hexdigest()[:16] + "/")
        self.kek_file = os.path.join(self.home, "kek")
        with open(self.kek_file, "wb") as f:
            f.write(kek or os.urandom(32))
        self.admin_token = admin_token or "e2e-admin-" + os.urandom(8).hex()
        self.admin_token_file = os.path.join(self.home, "admin-token")
        with open(self.admin_token_file, "w") as f:
            f.write(self.admin_token + "\n")
        self.extra_args = list(extra_args)
        self.wrapper = list(wrapper)  # a command the server runs under (prlimit ...)
        # With a SoftHsm: the KEK sealed by its key `hsm_key` instead of the file above.
        self.hsm = hsm
        self.hsm_key = hsm_key
        self.env = dict(os.environ, **(hsm.env if hsm else {}), **(env or {}))
        self.process = None
        self.port = None
        self.metrics_port = None

    def start(self, listen="127.0.0.1:0", seconds=20):
        """Starts it and waits for its "serving" line; RuntimeError with its output if
        it exits or does not serve within `seconds` (then it is killed)."""
        self.log_path = os.path.join(self.home, f"server-{time.time_ns()}.log")
        self.log = open(self.log_path, "w+")
        self.process = subprocess.Popen(
            self.wrapper + SERVER + ["--listen", listen] + self.store_args() +
            self.kek_args() + ["--admin-token-file", self.admin_token_file,
             "--init", "--metrics-listen", "127.0.0.1:0"] + self.extra_args,
            stdout=self.log, stderr=subprocess.STDOUT, env=self.env)
        deadline = time.time() + seconds
        while time.time() < deadline:
            text = self.output()
            port = re.search(r'"event":"serving","port":(\d+)', text)
            metrics = re.search(r'"metrics_port":(\d+)', text)
            if port and metrics:
                self.port, self.metrics_port = int(port.group(1)), int(metrics.group(1))
                return self
            if self.process.poll() is not None:
                self.log.close()
                raise RuntimeError(f"server exited {self.process.returncode}: {text}")
            time.sleep(0.05)
        self.process.kill()
        self.process.wait()
        self.log.close()
        raise RuntimeError(f"server did not serve within {seconds} s: " + self.output())

    def kek_args(self):
        """Where the KEK comes from: the HSM, or the KEK file."""
        if self.hsm is not None:
            return self.hsm.server_args(self.hsm_key)
        return ["--kek-file", self.kek_file]

    def store_args(self):
        """Where the keystore is: --data-dir, or etcd's endpoints and this prefix."""
        if self.etcd is None:
            return ["--data-dir", self.data_dir]
        return ["--etcd-endpoints", self.etcd.endpoints, "--etcd-prefix", self.prefix]

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.process and self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=timeout)
        self.log.close()
        return self.process.returncode

    def output(self):
        with open(self.log_path) as log:
            return log.read()

    def cli(self, *args, token=None, input=None, check=True, extra_env=None):
        """Runs `sealbox --server ADDRESS ARGS`; returns the CompletedProcess."""
        env = dict(os.environ)
        env.pop("SEALBOX_TOKEN", None)
        if token is not None:
            env["SEALBOX_TOKEN"] = token
        env.update(extra_env or {})
        result = subprocess.run(CLI + ["--server", self.address] + list(args),
                                input=input, capture_output=True, env=env, timeout=300)
        if check and result.returncode != 0:
            raise AssertionError(f"sealbox {' '.join(args)} exited {result.returncode}: "
                                 f"{result.stderr.decode(errors='replace')}")
        return result

    def admin(self, *args, check=True):
        return self.cli("admin", *args, token=self.admin_token, check=check)

    def new_tenant(self, name, key="default", extra_key_args=()):
        """Creates a tenant with one key; returns a token for it."""
        self.admin("tenant", "create", name)
        self.admin("key", "create", name, key, *extra_key_args)
        # `token issue` prints just the token on stdout (its id goes to stderr).
        return self.admin("token", "issue", name).stdout.decode().strip()


# ---- gRPC clients with stubs generated at run time (python3-grpc-tools) ----------

DEADLINE = 30  # seconds, on every call: no test waits forever


_STUB_NAMES = ("admin_pb2", "admin_grpc", "data_pb2", "data_grpc")
_stubs = None


def stubs():
    """(admin_pb2, admin_grpc, data_pb2, data_grpc), compiled on first use, so tests
    that make no raw gRPC call need no protoc."""
    global _stubs
    if _stubs is None:
        _stubs = load_stubs("admin", "data")
    return _stubs


def __getattr__(name):
    """`from harness import admin_pb2` (and the other three) works too."""
    if name in _STUB_NAMES:
        return stubs()[_STUB_NAMES.index(name)]
    raise AttributeError(name)


def bearer(token):
    return [("authorization", f"Bearer {token}")]


class AdminClient:
    """The admin plane of one server: admin.Method(request) with the admin token."""

    def __init__(self, server):
        import grpc
        self.channel = grpc.insecure_channel(server.address)
        self.stub = stubs()[1].AdminStub(self.channel)
        self.metadata = bearer(server.admin_token)

    def __getattr__(self, method):
        call = getattr(self.stub, method)
        return lambda request: call(request, metadata=self.metadata, timeout=DEADLINE)

    def close(self):
        self.channel.close()


class CryptoClient:
    """The data plane of one server; `token` may also be given per call."""

    def __init__(self, address, token=None, options=()):
        import grpc
        self.channel = grpc.insecure_channel(address, options=list(options))
        self.stub = stubs()[3].CryptoStub(self.channel)
        self.metadata = bearer(token)

    def seal(self, key, plaintext, aad=b"", token=None):
        data_pb2 = stubs()[2]
        return self.stub.Seal(data_pb2.SealRequest(key=key, plaintext=plaintext,
                                                   associated_data=aad),
                              metadata=bearer(token) if token else self.metadata,
                              timeout=DEADLINE)

    def open(self, key, ciphertext, aad=b"", token=None):
        data_pb2 = stubs()[2]
        return self.stub.Open(data_pb2.OpenRequest(key=key, ciphertext=ciphertext,
                                                   associated_data=aad),
                              metadata=bearer(token) if token else self.metadata,
                              timeout=DEADLINE).plaintext

    def close(self):
        self.channel.close()


def new_tenant(admin, name, keys=("default",)):
    """Creates a tenant with keys; returns a token for it."""
    admin_pb2 = stubs()[0]
    admin.CreateTenant(admin_pb2.CreateTenantRequest(name=name))
    for key in keys:
        admin.CreateKey(admin_pb2.CreateKeyRequest(tenant=name, key=key))
    return admin.IssueToken(admin_pb2.IssueTokenRequest(tenant=name)).token


def run_operations_doc(heading, server):
    """Runs the first ```sh block under `heading` in docs/OPERATIONS.md as written,
    with `sealbox` on PATH and the server's admin token in SEALBOX_TOKEN; returns the
    CompletedProcess, having checked that it succeeded."""
    with open("docs/OPERATIONS.md") as f:
        section = f.read().split(heading, 1)[1]
    script = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    work = tempfile.mkdtemp(dir=server.home)
    wrapper = os.path.join(work, "sealbox")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nexec %s \"$@\"\n" % " ".join(map(shlex.quote, CLI)))
    os.chmod(wrapper, 0o755)
    env = dict(os.environ, PATH=work + os.pathsep + os.environ["PATH"],
               SEALBOX_SERVER=server.address, SEALBOX_TOKEN=server.admin_token)
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, env=env,
                            capture_output=True, timeout=300)
    if result.returncode != 0:
        raise AssertionError(result.stderr.decode(errors="replace"))
    return result


def metric(server, series):
    """The value of one series (`name` or `name{labels}`) on the server's /metrics, or
    None when it has none."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics",
                                  timeout=10).read().decode()
    found = re.search(rf"^{re.escape(series)} (\S+)$", text, re.M)
    return float(found.group(1)) if found else None


def run_doc_block(heading, env=None):
    """The first ```sh block under `heading` in docs/OPERATIONS.md, run as written in a
    fresh folder with `sealbox` and `sealbox-server` on PATH and `env` added: the
    CompletedProcess (text), having checked that it succeeded. Its folder is `.cwd`."""
    with open("docs/OPERATIONS.md") as f:
        section = f.read().split(heading, 1)[1]
    script = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    work = tempfile.mkdtemp(prefix="sealbox-doc-", dir=os.environ.get("TEST_TMPDIR"))
    bin_dir = os.path.join(work, ".bin")
    os.mkdir(bin_dir)
    for name, command in (("sealbox", CLI), ("sealbox-server", SERVER)):
        with open(os.path.join(bin_dir, name), "w") as f:
            f.write("#!/bin/sh\nexec %s \"$@\"\n" % " ".join(map(shlex.quote, command)))
        os.chmod(os.path.join(bin_dir, name), 0o755)
    clean = {k: v for k, v in os.environ.items()
             if k not in ("SEALBOX_SERVER", "SEALBOX_TOKEN", "SOFTHSM2_CONF")}
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work,
                            env=dict(clean, PATH=bin_dir + os.pathsep + os.environ["PATH"],
                                     **(env or {})),
                            capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise AssertionError(result.stdout + result.stderr)
    result.cwd = work
    return result


def start_replicas(count, extra_args=()):
    """`count` servers sharing one keystore (a data directory, or a prefix of etcd),
    one KEK and one bootstrap admin token, as replicas do; started."""
    kek = os.urandom(32)
    first = Server(kek=kek, extra_args=extra_args).start()
    return [first] + [
        Server(data_dir=first.data_dir, kek=kek, admin_token=first.admin_token,
               etcd=first.etcd, prefix=first.prefix, extra_args=extra_args).start()
        for _ in range(count - 1)]


def unary_key_version(ciphertext):
    """The key version in a unary ciphertext's header (docs/FORMAT.md)."""
    assert ciphertext[0] == 0x01, ciphertext[:1]
    return int.from_bytes(ciphertext[1:5], "big")
