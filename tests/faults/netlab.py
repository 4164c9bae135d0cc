"""A network of the test's own, for real faults: every etcd member and every sealbox
replica in a network namespace of its own, joined by veth pairs to a bridge in one
more namespace (the hub). Nothing touches the machine's own network: the addresses
(10.211.0.0/24) exist only inside these namespaces, and every namespace, with its
links, is deleted when the lab closes (namespaces a crashed run left are deleted
when the next lab opens).

Faults are nftables rules inside a node's namespace that drop packets silently, as a
partition does (no RST, no ICMP): cut a node from some peers both ways, or one way.
Replicas serve their clients on unix sockets, which no namespace separates, so the
load never crosses a faulty link; only the replicas' etcd traffic and etcd's own
peer traffic do.

Needs root (ip netns, nft): the tests run as root here, as tools/dev test does.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

SUBNET = "10.211.0"
PREFIX = "sbxf"  # namespace names: sbxf<pid>-<node>


def run(*argv, input=None, check=True):
    result = subprocess.run(list(argv), input=input, capture_output=True, text=True, timeout=60)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {result.stderr.strip()}")
    return result


def available():
    """Why a lab cannot run here, or None."""
    if os.geteuid() != 0:
        return "network namespaces need root (run as root, as tools/dev test does)"
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            return f"{tool} is missing (tools/dev installs iproute2 and nftables)"
    return None


def remove_stale_namespaces():
    """Deletes namespaces of labs whose process is gone."""
    listed = run("ip", "netns", "list", check=False).stdout
    for line in listed.splitlines():
        name = line.split()[0] if line.split() else ""
        match = re.match(rf"{PREFIX}(\d+)-", name)
        if match and not os.path.exists(f"/proc/{match.group(1)}"):
            run("ip", "netns", "del", name, check=False)


class Node:
    def __init__(self, lab, name, index):
        self.lab, self.name, self.index = lab, name, index
        self.namespace = f"{lab.tag}-{name}"
        self.ip = f"{SUBNET}.{index}"

    def argv(self, argv):
        """`argv` run inside this node's namespace."""
        return ["ip", "netns", "exec", self.namespace] + list(argv)


class Lab:
    def __init__(self):
        remove_stale_namespaces()
        self.tag = f"{PREFIX}{os.getpid()}"
        self.home = tempfile.mkdtemp(prefix="sealbox-netlab-", dir=os.environ.get("TEST_TMPDIR"))
        self.nodes = {}
        self.processes = []
        self.hub = f"{self.tag}-hub"
        self._namespaces = []
        self._add_namespace(self.hub)
        run("ip", "-n", self.hub, "link", "add", "br0", "type", "bridge")
        run("ip", "-n", self.hub, "addr", "add", f"{SUBNET}.1/24", "dev", "br0")
        run("ip", "-n", self.hub, "link", "set", "br0", "up")
        self.cuts = {}  # node name -> description of the rules in force

    def _add_namespace(self, name):
        run("ip", "netns", "add", name)
        self._namespaces.append(name)
        run("ip", "-n", name, "link", "set", "lo", "up")

    def node(self, name):
        """A new node on the bridge, with the next address."""
        index = 10 + len(self.nodes)
        node = Node(self, name, index)
        self._add_namespace(node.namespace)
        hub_end = f"v{index}"
        run("ip", "-n", self.hub, "link", "add", hub_end, "type", "veth", "peer", "name",
            "eth0", "netns", node.namespace)
        run("ip", "-n", self.hub, "link", "set", hub_end, "master", "br0", "up")
        run("ip", "-n", node.namespace, "addr", "add", f"{node.ip}/24", "dev", "eth0")
        run("ip", "-n", node.namespace, "link", "set", "eth0", "up")
        self.nodes[name] = node
        return node

    def in_hub(self, argv):
        return ["ip", "netns", "exec", self.hub] + list(argv)

    def spawn(self, node, argv, log_name):
        """Starts `argv` in `node`'s namespace, its output to a log in the lab's home."""
        log = open(os.path.join(self.home, log_name), "a")
        process = subprocess.Popen(node.argv(argv), stdout=log, stderr=subprocess.STDOUT)
        self.processes.append((process, log))
        return process

    # ---- faults -----------------------------------------------------------------

    def drop(self, node, peers, inbound=True, outbound=True):
        """Drops, silently, `node`'s packets to (outbound) and from (inbound) `peers`.
        Replaces any rule `node` had."""
        addresses = ", ".join(peer.ip for peer in peers)
        chains = []
        if inbound:
            chains.append("chain input { type filter hook input priority 0; policy accept; "
                          f"ip saddr {{ {addresses} }} drop; }}")
        if outbound:
            chains.append("chain output { type filter hook output priority 0; "
                          f"policy accept; ip daddr {{ {addresses} }} drop; }}")
        rules = ("table inet sbxfault\ndelete table inet sbxfault\n"
                 "table inet sbxfault {\n" + "\n".join(chains) + "\n}\n")
        run(*node.argv(["nft", "-f", "-"]), input=rules)
        self.cuts[node.name] = (sorted(peer.name for peer in peers), inbound, outbound)

    def restore(self, node):
        """Lets every packet of `node` through again."""
        run(*node.argv(["nft", "delete", "table", "inet", "sbxfault"]), check=False)
        self.cuts.pop(node.name, None)

    def restore_all(self):
        for name in list(self.cuts):
            self.restore(self.nodes[name])

    def close(self):
        for process, log in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGCONT)
                process.kill()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pass
            log.close()
        for name in reversed(self._namespaces):
            run("ip", "netns", "del", name, check=False)


class LabEtcd:
    """Debian's etcd, one member per node, on the nodes' own addresses."""

    def __init__(self, lab, members=3):
        self.lab = lab
        self.nodes = [lab.node(f"e{i}") for i in range(members)]
        self.processes = [None] * members
        self.cluster = ",".join(f"{n.name}=http://{n.ip}:2380" for n in self.nodes)

    def start(self, seconds=30):
        for i in range(len(self.nodes)):
            self.start_member(i, initial=True)
        deadline = time.time() + seconds
        while time.time() < deadline:
            if self.etcdctl_result("endpoint", "health").returncode == 0:
                return self
            time.sleep(0.2)
        raise RuntimeError("the lab's etcd did not become healthy:\n" + self.logs())

    def start_member(self, i, initial=False):
        node = self.nodes[i]
        url = f"http://{node.ip}"
        self.processes[i] = self.lab.spawn(node, [
            "/usr/bin/etcd", "--name", node.name,
            "--data-dir", os.path.join(self.lab.home, node.name),
            "--listen-client-urls", f"{url}:2379", "--advertise-client-urls", f"{url}:2379",
            "--listen-peer-urls", f"{url}:2380", "--initial-advertise-peer-urls", f"{url}:2380",
            "--initial-cluster", self.cluster,
            "--initial-cluster-state", "new" if initial else "existing",
            "--logger", "zap", "--log-level", "warn"], f"{node.name}.log")

    def endpoints(self, first=0):
        """Every member's client address, member `first` first (where a replica given
        them starts)."""
        order = self.nodes[first:] + self.nodes[:first]
        return ",".join(f"{n.ip}:2379" for n in order)

    def etcdctl_result(self, *args, endpoints=None):
        return subprocess.run(
            self.lab.in_hub(["/usr/bin/etcdctl", "--endpoints", endpoints or self.endpoints(),
                             "--dial-timeout", "1s", "--command-timeout", "3s"] + list(args)),
            capture_output=True, text=True, env=dict(os.environ, ETCDCTL_API="3"), timeout=30)

    def etcdctl(self, *args, endpoints=None):
        result = self.etcdctl_result(*args, endpoints=endpoints)
        if result.returncode != 0:
            raise AssertionError(f"etcdctl {' '.join(args)}: {result.stderr}")
        return result.stdout

    def leader(self):
        """The index of the member that leads now (asking every member)."""
        status = json.loads(self.etcdctl("endpoint", "status", "-w", "json"))
        for entry in status:
            if entry["Status"]["header"]["member_id"] == entry["Status"].get("leader"):
                address = entry["Endpoint"].rsplit(":", 1)[0]
                return [n.ip for n in self.nodes].index(address)
        raise AssertionError("no etcd leader")

    def wait_for_leader(self, among, seconds=20):
        """Waits until a member of `among` (indexes) leads, asking only them."""
        endpoints = ",".join(f"{self.nodes[i].ip}:2379" for i in among)
        deadline = time.time() + seconds
        while time.time() < deadline:
            result = self.etcdctl_result("endpoint", "status", "-w", "json", endpoints=endpoints)
            if result.returncode == 0:
                for entry in json.loads(result.stdout):
                    header = entry["Status"]["header"]
                    # No "leader" at all while a member knows of none (an election).
                    if header["member_id"] == entry["Status"].get("leader"):
                        return
            time.sleep(0.1)
        raise AssertionError(f"no leader among members {among} within {seconds} s")

    def logs(self):
        out = []
        for node in self.nodes:
            path = os.path.join(self.lab.home, f"{node.name}.log")
            if os.path.exists(path):
                with open(path) as f:
                    out.append(f"--- {node.name}\n" + f.read()[-3000:])
        return "\n".join(out)
