"""Bounded staleness under real network faults: three etcd members and three sealbox
replicas, each in a network namespace of its own (netlab.py), under a data-plane load
and admin writes (history.py), while packets are dropped between them. After each
scenario the whole history is checked: no call served with a token more than the
bound after its revocation was acknowledged, no call served by a cut-off replica past
the bound, no acknowledged change lost, every ciphertext sealed during the run still
opening. Each scenario prints one line of figures, "FAULTS {...}" (RELIABILITY.md).

SEALBOX_FAULT_SCENARIOS picks the scenarios (comma-separated names of the methods
below without test_, or "all"); the fast stage runs the short replica cut.
"""
import calendar
import json
import math
import os
import statistics
import subprocess
import sys
import time
import unittest

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../e2e"))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from cluster import FaultCluster, health  # noqa: E402
from history import CALL_TIMEOUT, Workload  # noqa: E402
from netlab import available  # noqa: E402

SELECTED = os.environ.get("SEALBOX_FAULT_SCENARIOS", "all").split(",")
TENANT, KEY = "faults", "default"


def selected(name):
    return unittest.skipUnless("all" in SELECTED or name in SELECTED,
                               f"not in SEALBOX_FAULT_SCENARIOS ({','.join(SELECTED)})")


def seal_code(replica, token, plaintext=b"probe"):
    try:
        replica.crypto.Seal(harness.data_pb2.SealRequest(key=KEY, plaintext=plaintext),
                            metadata=harness.bearer(token), timeout=CALL_TIMEOUT)
        return grpc.StatusCode.OK, ""
    except grpc.RpcError as error:
        return error.code(), error.details() or ""


def wait_until(condition, what, seconds, every=0.002):
    """Polls `condition` every `every` s; the time it took. AssertionError after `seconds`."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if condition():
            return time.monotonic() - start
        time.sleep(every)
    raise AssertionError(f"not within {seconds} s: {what}")


def server_heal_times(log, heals_at):
    """From a replica's log, for each heal (wall-clock seconds): milliseconds until it
    found a member that answers, and until it was proven current again."""
    events = []
    for line in log.splitlines():
        if '"keystore_member_answered"' in line or '"keystore_reachable"' in line:
            entry = json.loads(line)
            stamp = calendar.timegm(time.strptime(entry["ts"][:19], "%Y-%m-%dT%H:%M:%S"))
            events.append((stamp + float(entry["ts"][19:23]), entry["event"]))
    out = []
    for heal in heals_at:
        # nft's own run (tens of ms) ends after the network is back: look from before.
        after = {event: round((t - heal) * 1000, 1) for t, event in reversed(events)
                 if heal - 0.1 <= t < heal + 1.0}
        out.append((after.get("keystore_member_answered"), after.get("keystore_reachable")))
    return out


def percentile(values, fraction):
    """The nearest-rank percentile: of 100 values, p99 is the 99th smallest (the
    largest is p100)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


@unittest.skipIf(available() is not None, f"SKIPPED: {available()}")
class Partitions(unittest.TestCase):
    def start(self, bound, workers=6):
        """A cluster with --max-staleness=`bound` s, a tenant and key, and a running
        workload: (cluster, workload)."""
        cluster = FaultCluster(f"{bound}s")
        self.addCleanup(cluster.close)
        self.cluster = cluster
        r0 = cluster.replicas[0]
        admin = lambda method, request: getattr(r0.admin, method)(  # noqa: E731
            request, metadata=r0.admin_metadata, timeout=CALL_TIMEOUT)
        admin("CreateTenant", harness.admin_pb2.CreateTenantRequest(name=TENANT))
        admin("CreateKey", harness.admin_pb2.CreateKeyRequest(tenant=TENANT, key=KEY))
        workload = Workload(cluster.replicas, TENANT, KEY, bound, workers=workers)
        self.assertGreaterEqual(len(workload.live), 3, "tokens issued before the run")
        workload.start()
        self.addCleanup(workload.stop)  # before the cluster closes
        time.sleep(1)
        return cluster, workload

    def finish(self, name, cluster, workload, serve_throughout, **figures):
        """Heals everything, waits for every replica to serve, stops the load, checks
        the history and prints the scenario's figures."""
        cluster.lab.restore_all()
        for fault in workload.faults:
            if fault.end is None:
                workload.healed(fault)
        token = next(iter(workload.live.values()))
        for replica in cluster.replicas:
            wait_until(lambda: seal_code(replica, token)[0] == grpc.StatusCode.OK,
                       f"{replica.name} serving again after the heal", 20, every=0.05)
        time.sleep(0.5)
        workload.stop()
        out = workload.check(serve_throughout=serve_throughout)
        workload.verify_after_heal(out)
        out.figures.update(figures)
        print("FAULTS " + json.dumps({"scenario": name, **out.figures}, sort_keys=True),
              flush=True)
        if out.violations:
            self.fail(f"{name}: {len(out.violations)} violations, first ten:\n" +
                      "\n".join(out.violations[:10]) + "\n" + cluster.server_logs())
        self.assertEqual(out.figures["acknowledged_changes_lost"], 0)
        self.assertEqual(out.figures["ciphertexts_not_opening"], 0)
        self.assertGreater(out.figures["served"], 0)
        return out

    def cut_replica_from_etcd(self, cluster, workload, name, seconds, bound, one_way=False):
        """Cuts replica `name` from every member for `seconds`; checks, during the
        cut, that it stops serving by the bound (health included) and that a token
        revoked meanwhile is refused by it within the bound plus a second. Returns
        figures."""
        node = cluster.node(name)
        replica = cluster.replica(name)
        # Kept from the workload's own revocations: this test revokes it.
        with workload.lock:
            watched_id = list(workload.live)[-1]
            watched = workload.live.pop(watched_id)
        self.assertEqual(seal_code(replica, watched)[0], grpc.StatusCode.OK)
        cluster.lab.drop(node, cluster.etcd.nodes, inbound=not one_way)
        fault = workload.fault(name, "one-way loss to etcd" if one_way else "cut from etcd")
        # Revoked through another replica during the cut.
        time.sleep(0.3)
        workload.admin_targets = [r for r in cluster.replicas if r.name != name]
        r0 = workload.admin_targets[0]
        r0.admin.RevokeToken(harness.admin_pb2.RevokeTokenRequest(
            tenant=TENANT, token_id=watched_id), metadata=r0.admin_metadata,
            timeout=CALL_TIMEOUT)
        revoked_at = time.monotonic()
        with workload.lock:
            workload.revoked[watched_id] = (watched, revoked_at)
        self.assertEqual(seal_code(workload.admin_targets[0], watched)[0],
                         grpc.StatusCode.UNAUTHENTICATED)
        # The revoked token is refused there by the bound (plus a second); a token it
        # knows and that stays valid is served until the bound, then refused.
        steady = workload.live[next(iter(workload.steady))]
        refused_at, last_served = None, fault.start
        while time.monotonic() < fault.start + bound + 5:
            if refused_at is None and seal_code(replica, watched)[0] != grpc.StatusCode.OK:
                refused_at = time.monotonic()
            if seal_code(replica, steady)[0] != grpc.StatusCode.OK:
                if refused_at is None and \
                        seal_code(replica, watched)[0] != grpc.StatusCode.OK:
                    refused_at = time.monotonic()
                break
            last_served = time.monotonic()
            time.sleep(0.01)
        self.assertIsNotNone(refused_at, f"{name} never refused the revoked token")
        refused_after_revoke = refused_at - revoked_at
        self.assertLess(refused_after_revoke, bound + 1)
        served_until = last_served - fault.start
        self.assertLess(served_until, bound)
        code, detail = seal_code(replica, steady)
        self.assertEqual(code, grpc.StatusCode.UNAVAILABLE, detail)
        self.assertIn("stale", detail)
        self.assertIn(f"--max-staleness={bound}s", detail)
        self.assertEqual(health(replica.address, "sealbox.v1.Crypto"), "NOT_SERVING")
        self.assertEqual(health(replica.address, ""), "NOT_SERVING")
        metrics = cluster.metrics(name)
        self.assertGreater(metrics["sealbox_keystore_staleness_seconds"], bound)
        self.assertEqual(metrics["sealbox_keystore_max_staleness_seconds"], bound)
        self.assertEqual(metrics["sealbox_keystore_reachable"], 0)
        self.assertEqual(metrics["sealbox_keystore_loaded"], 1)
        self.assertGreater(metrics["sealbox_keystore_stale_refusals_total"], 0)
        self.assertGreater(metrics["sealbox_keystore_revision"], 0)
        remaining = fault.start + seconds - time.monotonic()
        if remaining > 0:
            time.sleep(remaining)
        workload.healed(fault)
        cluster.lab.restore(node)
        healed = time.monotonic()
        live = next(iter(workload.live.values()))
        wait_until(lambda: seal_code(replica, live)[0] == grpc.StatusCode.OK,
                   f"{name} serving again after the heal", 10, every=0.002)
        serving_again = time.monotonic() - healed
        self.assertEqual(seal_code(replica, watched)[0], grpc.StatusCode.UNAUTHENTICATED)
        metrics = cluster.metrics(name)
        self.assertLess(metrics["sealbox_keystore_staleness_seconds"], 1)
        self.assertEqual(metrics["sealbox_keystore_reachable"], 1)
        self.assertGreaterEqual(metrics["sealbox_keystore_reloads_total"], 1)  # the relist
        self.assertGreater(metrics["sealbox_keystore_catch_ups_total"], 0)
        workload.admin_targets = list(cluster.replicas)
        return {"revoked_token_refused_by_cut_replica_after_s": round(refused_after_revoke, 3),
                "cut_replica_served_until_s": round(served_until, 3),
                "serving_again_after_heal_ms": round(serving_again * 1000, 1)}

    def heal_latencies(self, cluster, name, cycles, cut_seconds=1.5):
        """Revocations made during a cut shorter than the bound, measured from the
        heal to the first refusal on the healed replica: milliseconds, per cycle."""
        node, replica = cluster.node(name), cluster.replica(name)
        r0 = cluster.replicas[0]
        latencies, heals_at = [], []
        for _ in range(cycles):
            issued = r0.admin.IssueToken(harness.admin_pb2.IssueTokenRequest(tenant=TENANT),
                                         metadata=r0.admin_metadata, timeout=CALL_TIMEOUT)
            wait_until(lambda: seal_code(replica, issued.token)[0] == grpc.StatusCode.OK,
                       f"{name} knows the new token", 5, every=0.01)
            cluster.lab.drop(node, cluster.etcd.nodes)
            cut_at = time.monotonic()
            time.sleep(0.3)
            r0.admin.RevokeToken(harness.admin_pb2.RevokeTokenRequest(
                tenant=TENANT, token_id=issued.info.id), metadata=r0.admin_metadata,
                timeout=CALL_TIMEOUT)
            # Still honoured there: it has not heard (and is within the bound).
            self.assertEqual(seal_code(replica, issued.token), (grpc.StatusCode.OK, ""),
                             cluster.server_logs())
            poller = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "poll_until_refused.py"), replica.address,
                 issued.token, KEY, "15"], stdout=subprocess.PIPE, text=True)
            self.assertEqual(poller.stdout.readline().strip(), "ready")
            time.sleep(max(0.0, cut_at + cut_seconds - time.monotonic()))
            # The network is back once nft has committed the rule's removal: taken just
            # after it returns (before would count its own start-up, tens of ms).
            cluster.lab.restore(node)
            healed = time.monotonic()
            heals_at.append(time.time())
            refused, code = poller.stdout.readline().split()
            poller.wait(timeout=20)
            poller.stdout.close()
            self.assertEqual(code, "UNAUTHENTICATED")
            latencies.append((float(refused) - healed) * 1000)
            time.sleep(0.2)
        self.heal_breakdown = server_heal_times(
            cluster.servers[int(name[1:])].output(), heals_at)
        return latencies

    # ---- scenarios ------------------------------------------------------------------

    @selected("replica_cut_short")
    def test_replica_cut_short(self):
        """The fast stage's scenario: one replica cut from all of etcd for longer than
        a 2 s bound (the least allowed), under load; two heals timed."""
        bound = 2
        cluster, workload = self.start(bound, workers=4)
        figures = self.cut_replica_from_etcd(cluster, workload, "r2", 3.5, bound)
        heals = self.heal_latencies(cluster, "r2", cycles=2, cut_seconds=1.0)
        # Loose here (the fast stage builds beside it); the slow stage holds the
        # 100 ms target.
        self.assertLess(max(heals), 1000, heals)
        self.finish("replica_cut_short", cluster, workload, ["r0", "r1"], bound_s=bound,
                    cut_s=3.5, heal_ms=[round(h, 1) for h in heals], **figures)

    @selected("replica_cut")
    def test_replica_cut(self):
        """One replica cut from all of etcd for 12 s with a 5 s bound: it serves until
        the bound, then refuses; the others serve throughout."""
        bound = 5
        cluster, workload = self.start(bound)
        figures = self.cut_replica_from_etcd(cluster, workload, "r2", 12, bound)
        self.finish("replica_cut", cluster, workload, ["r0", "r1"], bound_s=bound, cut_s=12,
                    **figures)

    @selected("one_way")
    def test_one_way_loss(self):
        """A replica's packets to etcd dropped, etcd's to it delivered, for 10 s."""
        bound = 5
        cluster, workload = self.start(bound)
        figures = self.cut_replica_from_etcd(cluster, workload, "r2", 10, bound, one_way=True)
        self.finish("one_way", cluster, workload, ["r0", "r1"], bound_s=bound, cut_s=10,
                    **figures)

    @selected("member_isolated")
    def test_member_isolated(self):
        """etcd member e2, where replica r2 started, isolated from every other node for
        10 s: r2 moves to another member, and no replica stops serving."""
        bound = 5
        cluster, workload = self.start(bound)
        e2 = cluster.node("e2")
        others = [n for n in cluster.lab.nodes.values() if n is not e2]
        cluster.lab.drop(e2, others)
        fault = workload.fault("e2", "member isolated", cuts_replica=False)
        time.sleep(10)
        workload.healed(fault)
        cluster.lab.restore(e2)
        time.sleep(2)
        self.finish("member_isolated", cluster, workload, ["r0", "r1", "r2"], bound_s=bound,
                    isolated_s=10)

    @selected("leader_isolated")
    def test_leader_isolated(self):
        """The etcd leader isolated for 8 s, then healed: the others elect a new one,
        replicas on the old leader move, no replica stops serving."""
        bound = 5
        cluster, workload = self.start(bound)
        leader = cluster.etcd.leader()
        node = cluster.etcd.nodes[leader]
        others = [n for n in cluster.lab.nodes.values() if n is not node]
        cluster.lab.drop(node, others)
        fault = workload.fault(node.name, "leader isolated", cuts_replica=False)
        cluster.etcd.wait_for_leader([i for i in range(3) if i != leader])
        time.sleep(8)
        workload.healed(fault)
        cluster.lab.restore(node)
        time.sleep(3)
        self.finish("leader_isolated", cluster, workload, ["r0", "r1", "r2"], bound_s=bound,
                    isolated_s=8, leader=node.name)

    @selected("flapping")
    def test_flapping_link(self):
        """Replica r2's link to etcd cut and restored every 2 s for 60 s: each cut is
        shorter than the 5 s bound, so it keeps serving, and what is revoked reaches it
        in the windows between."""
        bound = 5
        cluster, workload = self.start(bound)
        r2 = cluster.node("r2")
        end = time.monotonic() + 60
        flaps = 0
        while time.monotonic() < end:
            cluster.lab.drop(r2, cluster.etcd.nodes)
            fault = workload.fault("r2", "flapping link")
            time.sleep(2)
            workload.healed(fault)
            cluster.lab.restore(r2)
            flaps += 1
            time.sleep(2)
        self.finish("flapping", cluster, workload, ["r0", "r1", "r2"], bound_s=bound,
                    flaps=flaps, flap_s=2)

    @selected("heal")
    def test_heal(self):
        """Revocations made during a cut are in force on the healed replica within
        100 ms (p99) of the network coming back: 100 cuts of 1 s, under load."""
        bound = 5
        cluster, workload = self.start(bound, workers=2)
        heals = self.heal_latencies(cluster, "r2", cycles=100, cut_seconds=1.0)
        p50, p99 = statistics.median(heals), percentile(heals, 0.99)
        print("HEALS", [round(h, 1) for h in heals], "server (answered, current) ms:",
              self.heal_breakdown, flush=True)
        self.assertLess(p99, 100, heals)
        self.finish("heal", cluster, workload, ["r0", "r1", "r2"], bound_s=bound,
                    heal_ms_p50=round(p50, 1), heal_ms_p99=round(p99, 1),
                    heal_ms_max=round(max(heals), 1), cycles=len(heals))


if __name__ == "__main__":
    unittest.main(verbosity=2)
