"""Three etcd members and three sealbox replicas in a lab (netlab.py): replica rI in
namespace rI, given every member's address with eI's first, so each replica starts
on a different member. Replicas serve on unix sockets in the lab's home."""
import os
import shutil
import subprocess
import sys
import tempfile
import types

import grpc

import harness
from history import Replica
from netlab import Lab, LabEtcd


def health(address, service):
    """The replica's gRPC health status for `service`: "SERVING", "NOT_SERVING", or
    the error's code name. Raw bytes, so no health stubs are needed: the request is
    HealthCheckRequest{service}, the answer HealthCheckResponse{status}."""
    name = service.encode()
    request = b"\x0a" + bytes([len(name)]) + name
    with grpc.insecure_channel(address) as channel:
        check = channel.unary_unary("/grpc.health.v1.Health/Check")
        try:
            answer = check(request, timeout=5)
        except grpc.RpcError as error:
            return error.code().name
    return {b"\x08\x01": "SERVING", b"\x08\x02": "NOT_SERVING"}.get(answer, answer.hex())


class FaultCluster:
    def __init__(self, max_staleness, members=3, replicas=3, extra_args=()):
        self.lab = Lab()
        try:
            self.etcd = LabEtcd(self.lab, members).start()
            kek, admin_token = os.urandom(32), "faults-admin-" + os.urandom(8).hex()
            self.servers, self.replicas, self.nodes = [], [], []
            # Unix socket paths are limited to 107 bytes: not under Bazel's TEST_TMPDIR.
            self.sockets = tempfile.mkdtemp(prefix="sbxf-", dir="/tmp")
            for i in range(replicas):
                node = self.lab.node(f"r{i}")
                socket = os.path.join(self.sockets, f"r{i}.sock")
                server = harness.Server(
                    kek=kek, admin_token=admin_token, wrapper=node.argv([]), prefix="/sealbox/",
                    etcd=types.SimpleNamespace(endpoints=self.etcd.endpoints(first=i)),
                    # The workload presents revoked tokens on purpose; the per-address
                    # limit would soon refuse its unix-socket clients, all one address.
                    extra_args=[f"--max-staleness={max_staleness}",
                                "--auth-failures-per-minute=0"] + list(extra_args))
                server.start(listen=f"unix:{socket}")
                server.socket_address = f"unix:{socket}"
                self.servers.append(server)
                self.nodes.append(node)
                self.replicas.append(Replica(node.name, server.socket_address, admin_token))
        except BaseException:
            self.close()
            raise

    def replica(self, name):
        return self.replicas[[r.name for r in self.replicas].index(name)]

    def node(self, name):
        return self.lab.nodes[name]

    def metrics(self, name):
        """Replica `name`'s Prometheus series: {"series{labels}": value}. Its exporter
        listens on loopback inside its namespace, so it is fetched from there."""
        index = [r.name for r in self.replicas].index(name)
        url = f"http://127.0.0.1:{self.servers[index].metrics_port}/metrics"
        fetch = ("import sys, urllib.request; "
                 "sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())")
        text = subprocess.run(self.nodes[index].argv([sys.executable, "-c", fetch, url]),
                              capture_output=True, text=True, check=True, timeout=30).stdout
        series = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name_part, value = line.rsplit(" ", 1)
                series[name_part] = float(value)
        return series

    def server_logs(self):
        return "\n".join(f"--- {node.name}\n{server.output()[-4000:]}"
                         for node, server in zip(self.nodes, self.servers))

    def close(self):
        for replica in getattr(self, "replicas", []):
            replica.close()
        for server in getattr(self, "servers", []):
            if server.process and server.process.poll() is None:
                server.stop()
        self.lab.close()
        if hasattr(self, "sockets"):
            shutil.rmtree(self.sockets, ignore_errors=True)
