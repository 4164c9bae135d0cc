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
    """Polls `condition` every `every` s; the time it took. AssertionError after `seconds`
    (`what` may be a function, called then, to say what was seen)."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if condition():
            return time.monotonic() - start
        time.sleep(every)
    raise AssertionError(f"not within {seconds} s: {what() if callable(what) else what}")


def stale_refusal(code, detail, bound):
    """Whether an answer is a replica past its bound refusing for it, as the promise
    says it must (UNAVAILABLE, naming the bound)."""
    return (code == grpc.StatusCode.UNAVAILABLE and "stale" in detail
            and f"--max-staleness={bound}s" in detail)


def summary(calls, details, since):
    """The poller's answers as runs of one code, for a failure message: code, count,
    first and last start (seconds after `since`), the run's first detail."""
    runs = []
    for start, _, code, detail in calls:
        if runs and runs[-1][0] == code:
            runs[-1][1] += 1
            runs[-1][3] = start
        else:
            runs.append([code, 1, start, start, details[detail]])
    return "; ".join(f"{code} x{count} {first - since:.3f}..{last - since:.3f} s {detail[:160]!r}"
                     for code, count, first, last, detail in runs)


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
        # Running: every replica has served the load and a revocation was acknowledged
        # (a busy machine may take seconds to get there, an idle one a fraction).
        wait_until(workload.running, "the load served on every replica and "
                   "a revocation acknowledged", 30, every=0.05)
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
        time.sleep(0.5)  # healed history for the checker; nothing below waits on it
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

    def metrics_when(self, cluster, name, condition, what, seconds=10):
        """Replica `name`'s series once `condition(series)` holds (a gauge such as
        reachable follows its store's next answer or time-out, not the first refusal)."""
        seen = {}

        def reached():
            seen.update(cluster.metrics(name))
            return condition(seen)
        wait_until(reached, lambda: f"{name}: {what}; last seen: {seen}", seconds, every=0.1)
        return seen

    def cut_replica_from_etcd(self, cluster, workload, name, seconds, bound, one_way=False):
        """Cuts replica `name` from every member for `seconds` (longer if its checks
        need it); checks, during the cut, that it serves nothing from the bound on and
        refuses for staleness (health and metrics saying so), and that a token revoked
        meanwhile is never served there from the bound after its revocation. Every
        answer is judged by its call's start, as the history's checker does: when an
        answer arrives says little of when the replica decided, on a busy machine
        least of all. Returns figures."""
        node = cluster.node(name)
        replica = cluster.replica(name)
        # Kept from the workload's own revocations: this test revokes it.
        with workload.lock:
            watched_id = list(workload.live)[-1]
            watched = workload.live.pop(watched_id)
        wait_until(lambda: seal_code(replica, watched)[0] == grpc.StatusCode.OK,
                   f"{name} serving the token to be revoked, before the cut", 10, every=0.01)
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
        # The replica that acknowledged it waited for the change in its own snapshot.
        self.assertEqual(seal_code(workload.admin_targets[0], watched)[0],
                         grpc.StatusCode.UNAUTHENTICATED)
        # The revoked token is never served there from the bound after its revocation;
        # a token it knows and that stays valid is served until the bound after the
        # cut, then refused. Polled until both are refused.
        steady = workload.live[next(iter(workload.steady))]
        tokens = {"revoked": watched, "valid": steady}
        served = {}  # which -> the last served call's start
        refusal = {}  # which -> (code, detail, end) of its first refusal
        while time.monotonic() < fault.start + bound + 10 and len(refusal) < len(tokens):
            for which, token in tokens.items():
                if which in refusal:
                    continue
                start = time.monotonic()
                code, detail = seal_code(replica, token)
                if code == grpc.StatusCode.OK:
                    served[which] = start
                else:
                    refusal[which] = (code, detail, time.monotonic())
            time.sleep(0.01)
        self.assertIn("revoked", refusal, f"{name} never refused the revoked token")
        self.assertIn("valid", refusal, f"{name} never stopped serving in the cut")
        if "revoked" in served:
            self.assertLess(served["revoked"] - revoked_at, bound,
                            f"{name} served the revoked token past the bound")
        served_until = max(served.values(), default=fault.start) - fault.start
        self.assertLess(served_until, bound, f"{name} served past the bound in the cut")
        # Refused as revoked only if it heard (a one-way loss may let the watch's
        # event through); otherwise for staleness, like everything else there.
        code, detail, refused_at = refusal["revoked"]
        if code != grpc.StatusCode.UNAUTHENTICATED:
            self.assertTrue(stale_refusal(code, detail, bound), f"{code.name}: {detail}")
        refused_after_revoke = refused_at - revoked_at
        code, detail, _ = refusal["valid"]
        self.assertTrue(stale_refusal(code, detail, bound), f"{code.name}: {detail}")
        # Health follows on the server's own timer, set for when the bound passes.
        wait_until(lambda: health(replica.address, "sealbox.v1.Crypto") == "NOT_SERVING" and
                   health(replica.address, "") == "NOT_SERVING",
                   f"{name}'s health NOT_SERVING in the cut", 10, every=0.05)
        # Unreachable once a read of the store has timed out (up to 2 s, by how long
        # reads took before).
        metrics = self.metrics_when(
            cluster, name, lambda m: m["sealbox_keystore_reachable"] == 0,
            "keystore unreachable in the cut")
        self.assertGreater(metrics["sealbox_keystore_staleness_seconds"], bound)
        self.assertEqual(metrics["sealbox_keystore_max_staleness_seconds"], bound)
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
        # Serving again means proven current since the heal: the revocation is there.
        self.assertEqual(seal_code(replica, watched)[0], grpc.StatusCode.UNAUTHENTICATED)
        # Reachable is set just after the proof that let it serve; the next heartbeats
        # keep its staleness low.
        metrics = self.metrics_when(
            cluster, name, lambda m: m["sealbox_keystore_reachable"] == 1 and
            m["sealbox_keystore_staleness_seconds"] < 1, "current and reachable after the heal")
        self.assertGreaterEqual(metrics["sealbox_keystore_reloads_total"], 1)  # the relist
        self.assertGreater(metrics["sealbox_keystore_catch_ups_total"], 0)
        workload.admin_targets = list(cluster.replicas)
        return {"revoked_token_refused_by_cut_replica_after_s": round(refused_after_revoke, 3),
                "cut_replica_served_until_s": round(served_until, 3),
                "serving_again_after_heal_ms": round(serving_again * 1000, 1)}

    def judge_poll(self, poll, bound, cut_at, revoked_at, restoring):
        """Judges every answer the poller had on the cut replica by the promise. Served:
        only before the bound after the revocation, and, in the cut, before the bound
        after it. Refused for staleness: allowed (a loaded replica may pass its bound
        before the heal). Refused as revoked: only once the network was coming back,
        and the last answer. Returns when that refusal arrived, and whether the
        replica passed its bound meanwhile."""
        calls, details = poll["calls"], poll["details"]

        def seen():
            return "; answers, seconds from the cut: " + summary(calls, details, cut_at)
        self.assertTrue(calls and calls[-1][2] == "UNAUTHENTICATED",
                        "the revoked token was never refused as revoked" + seen())
        stale = False
        for start, end, name, detail in calls:
            code, detail = grpc.StatusCode[name], details[detail]
            if code == grpc.StatusCode.OK:
                self.assertLess(start - revoked_at, bound,
                                "the revoked token served past the bound" + seen())
                if cut_at <= start < restoring:
                    self.assertLess(start - cut_at, bound,
                                    "the cut replica served past the bound" + seen())
            elif code == grpc.StatusCode.UNAVAILABLE:
                self.assertTrue(stale_refusal(code, detail, bound), detail + seen())
                stale = True
            else:
                self.assertEqual(code, grpc.StatusCode.UNAUTHENTICATED, detail + seen())
                self.assertGreater(end, restoring, "refused as revoked before the heal: the "
                                   "cut let the revocation through" + seen())
        return calls[-1][1], stale

    def heal_latencies(self, cluster, name, bound, cycles, cut_seconds=1.5):
        """Revocations made during a cut shorter than the bound, measured from the
        heal to the first refusal as revoked on the healed replica: milliseconds, per
        cycle. A process of its own seals with the token there from before the cut
        until that refusal; every answer it had is judged (judge_poll). Sets
        self.stale_cycles: cycles in which the replica passed its bound before the
        heal (on a busy machine a 1 s cut can outlast a 2 s bound's margin)."""
        node, replica = cluster.node(name), cluster.replica(name)
        r0 = cluster.replicas[0]
        latencies, heals_at = [], []
        self.stale_cycles = 0
        # Polling before the cut: the poller's start-up (seconds, on a busy machine)
        # must not lengthen the cut, so one poller serves every cycle.
        poller = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "poll_until_refused.py"), replica.address, KEY],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.addCleanup(poller.wait, timeout=10)
        self.addCleanup(poller.kill)  # a no-op once it has exited
        for _ in range(cycles):
            issued = r0.admin.IssueToken(harness.admin_pb2.IssueTokenRequest(tenant=TENANT),
                                         metadata=r0.admin_metadata, timeout=CALL_TIMEOUT)
            wait_until(lambda: seal_code(replica, issued.token)[0] == grpc.StatusCode.OK,
                       f"{name} knows the new token", 5, every=0.01)
            # It polls for at most 30 s, each call within 5 s: its answer comes.
            poller.stdin.write(f"{issued.token} 30\n")
            poller.stdin.flush()
            ready = poller.stdout.readline().strip()
            self.assertEqual(ready, "ready", f"the poller was never served: {ready}")
            cluster.lab.drop(node, cluster.etcd.nodes)
            cut_at = time.monotonic()
            time.sleep(0.3)
            r0.admin.RevokeToken(harness.admin_pb2.RevokeTokenRequest(
                tenant=TENANT, token_id=issued.info.id), metadata=r0.admin_metadata,
                timeout=CALL_TIMEOUT)
            revoked_at = time.monotonic()
            time.sleep(max(0.0, cut_at + cut_seconds - time.monotonic()))
            # The network is back once nft has committed the rule's removal: the heal is
            # timed from just after it returns (before would count its own start-up,
            # tens of ms); no refusal as revoked can come before it starts.
            restoring = time.monotonic()
            cluster.lab.restore(node)
            healed = time.monotonic()
            heals_at.append(time.time())
            answer = poller.stdout.readline()
            self.assertTrue(answer, "the poller ended without an answer")
            refused, stale = self.judge_poll(json.loads(answer), bound, cut_at,
                                             revoked_at, restoring)
            self.stale_cycles += stale
            latencies.append((refused - healed) * 1000)
            time.sleep(0.2)
        poller.stdin.close()
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
        heals = self.heal_latencies(cluster, "r2", bound, cycles=2, cut_seconds=1.0)
        # Back within a bound of the heal, as any replica that reaches its store must
        # prove itself current (or be refusing while connected). Finer figures follow
        # the machine's load (1.3 s seen at a load average of 22 on two cores): the slow
        # stage holds the 100 ms target.
        self.assertLess(max(heals), bound * 1000, heals)
        self.finish("replica_cut_short", cluster, workload, ["r0", "r1"], bound_s=bound,
                    cut_s=3.5, heal_ms=[round(h, 1) for h in heals],
                    heal_cycles_past_bound=self.stale_cycles, **figures)

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
        heals = self.heal_latencies(cluster, "r2", bound, cycles=100, cut_seconds=1.0)
        p50, p99 = statistics.median(heals), percentile(heals, 0.99)
        print("HEALS", [round(h, 1) for h in heals], "server (answered, current) ms:",
              self.heal_breakdown, flush=True)
        self.assertLess(p99, 100, heals)
        self.finish("heal", cluster, workload, ["r0", "r1", "r2"], bound_s=bound,
                    heal_ms_p50=round(p50, 1), heal_ms_p99=round(p99, 1),
                    heal_ms_max=round(max(heals), 1), cycles=len(heals),
                    heal_cycles_past_bound=self.stale_cycles)


if __name__ == "__main__":
    unittest.main(verbosity=2)
