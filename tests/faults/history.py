"""A workload that records its whole history, and a checker that reads it afterwards,
in the style of Jepsen: data-plane calls on every replica (Seal, and Open of what was
sealed) with a pool of tokens, and admin writes (tokens revoked and issued, the key
rotated) while faults come and go. Every call's start, end and outcome, and every
admin change's acknowledgement, are kept; the checker then looks for:

  - a call served with a token more than the bound after its revocation was
    acknowledged (the promise --max-staleness makes);
  - a call served by a cut-off replica more than the bound after the cut began;
  - an acknowledged change missing once the faults are healed;
  - a ciphertext sealed during the run that no longer opens (or opens wrongly).

Times are time.monotonic() in this process; the servers run on the same machine.
A call's start is taken before it is sent and an acknowledgement after its answer
arrives, so both comparisons lean towards finding a violation, never hiding one.
"""
import os
import random
import threading
import time
from dataclasses import dataclass, field

import grpc

from harness import admin_pb2, admin_grpc, bearer, data_pb2, data_grpc

CALL_TIMEOUT = 5  # seconds: a call to a cut-off replica may wait on its catch-up


@dataclass
class Call:
    replica: str
    method: str
    token_id: str
    start: float
    end: float
    code: grpc.StatusCode
    detail: str = ""


@dataclass
class Fault:
    """A fault on `target` (a replica or member name) between start and end."""
    target: str
    kind: str
    start: float
    end: float = None
    cuts_replica: bool = True  # the target is a replica cut from every member


@dataclass
class Outcome:
    violations: list = field(default_factory=list)
    figures: dict = field(default_factory=dict)


class Replica:
    """A replica as the workload sees it: a name and a unix-socket address."""

    def __init__(self, name, address, admin_token):
        self.name, self.address = name, address
        self.channel = grpc.insecure_channel(address)
        self.crypto = data_grpc.CryptoStub(self.channel)
        self.admin = admin_grpc.AdminStub(self.channel)
        self.admin_metadata = bearer(admin_token)

    def close(self):
        self.channel.close()


def code_of(error):
    return error.code() if isinstance(error, grpc.RpcError) else grpc.StatusCode.UNKNOWN


class Workload:
    def __init__(self, replicas, tenant, key, bound, workers=6, tokens=6, admin_every=0.4):
        """`workers` data-plane threads, spread evenly over the replicas."""
        self.replicas = replicas
        self.tenant, self.key, self.bound = tenant, key, bound
        self.workers, self.admin_every = workers, admin_every
        self.calls, self.faults = [], []
        self.sealed = []  # (ciphertext, plaintext)
        self.wrong_plaintexts = 0
        self.live = {}  # token id -> token, issues acknowledged
        # Never revoked: tokens every replica knows before a fault, so that a cut-off
        # replica has something it may serve until the bound.
        self.steady = set()
        self.revoked = {}  # token id -> (token, acknowledged at)
        self.unsure_revokes = {}  # token id -> token: a revoke not acknowledged yet
        self.rotations = 0  # acknowledged
        self.unsure_rotations = 0  # answered with an error that may hide a commit
        self.admin_targets = list(replicas)  # where admin writes go (the test narrows it)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = []
        for _ in range(tokens):
            self.issue()
        self.steady = set(list(self.live)[:2])

    # ---- admin writes ---------------------------------------------------------------

    def admin_call(self, method, request):
        """Tries the admin targets in turn: (response, None) or (None, last code)."""
        code = None
        for replica in list(self.admin_targets):
            try:
                return getattr(replica.admin, method)(
                    request, metadata=replica.admin_metadata, timeout=CALL_TIMEOUT), None
            except grpc.RpcError as error:
                code = code_of(error)
                if code == grpc.StatusCode.NOT_FOUND:
                    return None, code
        return None, code

    def issue(self):
        response, _ = self.admin_call(
            "IssueToken", admin_pb2.IssueTokenRequest(tenant=self.tenant))
        if response is not None:
            with self.lock:
                self.live[response.info.id] = response.token

    def revoke_one(self):
        with self.lock:
            if self.unsure_revokes:
                token_id, token = next(iter(self.unsure_revokes.items()))
            elif len(self.live) > len(self.steady) + 2:
                token_id = next(t for t in self.live if t not in self.steady)
                token = self.live.pop(token_id)
            else:
                return
        response, code = self.admin_call(
            "RevokeToken", admin_pb2.RevokeTokenRequest(tenant=self.tenant, token_id=token_id))
        acknowledged = time.monotonic()
        with self.lock:
            # NOT_FOUND: an earlier attempt that answered with an error did revoke it.
            if response is not None or code == grpc.StatusCode.NOT_FOUND:
                self.unsure_revokes.pop(token_id, None)
                self.revoked[token_id] = (token, acknowledged)
            else:
                self.unsure_revokes[token_id] = token

    def rotate(self):
        response, code = self.admin_call(
            "RotateKey", admin_pb2.KeyRef(tenant=self.tenant, key=self.key))
        with self.lock:
            if response is not None:
                self.rotations += 1
            elif code is not None:
                self.unsure_rotations += 1

    def admin_loop(self):
        round_ = 0
        while not self.stopping.wait(self.admin_every):
            self.revoke_one()
            self.issue()
            round_ += 1
            if round_ % 5 == 0:
                self.rotate()

    # ---- data plane -----------------------------------------------------------------

    def pick_token(self, rng):
        with self.lock:
            if self.revoked and rng.random() < 0.25:
                token_id = rng.choice(list(self.revoked))
                return token_id, self.revoked[token_id][0]
            token_id = rng.choice(list(self.live))
            return token_id, self.live[token_id]

    def data_loop(self, index):
        # Each worker keeps to one replica, so a replica that makes its callers wait
        # neither slows the load on the others nor goes unasked.
        rng = random.Random(index)
        replica = self.replicas[index % len(self.replicas)]
        while not self.stopping.is_set():
            token_id, token = self.pick_token(rng)
            with self.lock:
                opening = self.sealed and rng.random() < 0.4
                if opening:
                    ciphertext, plaintext = rng.choice(self.sealed)
            start = time.monotonic()
            try:
                if opening:
                    method = "Open"
                    response = replica.crypto.Open(
                        data_pb2.OpenRequest(key=self.key, ciphertext=ciphertext),
                        metadata=bearer(token), timeout=CALL_TIMEOUT)
                    if response.plaintext != plaintext:
                        with self.lock:
                            self.wrong_plaintexts += 1
                else:
                    method = "Seal"
                    plaintext = os.urandom(rng.randint(1, 256))
                    response = replica.crypto.Seal(
                        data_pb2.SealRequest(key=self.key, plaintext=plaintext),
                        metadata=bearer(token), timeout=CALL_TIMEOUT)
                    with self.lock:
                        self.sealed.append((response.ciphertext, plaintext))
                code, detail = grpc.StatusCode.OK, ""
            except grpc.RpcError as error:
                code, detail = code_of(error), error.details() or ""
            call = Call(replica.name, method, token_id, start, time.monotonic(), code, detail)
            with self.lock:
                self.calls.append(call)
            time.sleep(0.005)

    def running(self):
        """Every replica a worker keeps to has served it, and a revocation was
        acknowledged: the load is under way."""
        asked = {self.replicas[i % len(self.replicas)].name for i in range(self.workers)}
        with self.lock:
            served = {c.replica for c in self.calls if c.code == grpc.StatusCode.OK}
            return bool(self.revoked) and asked <= served

    def start(self):
        self.threads = [threading.Thread(target=self.data_loop, args=(i,), daemon=True)
                        for i in range(self.workers)]
        self.threads.append(threading.Thread(target=self.admin_loop, daemon=True))
        for thread in self.threads:
            thread.start()

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=CALL_TIMEOUT * 3)

    # ---- faults -----------------------------------------------------------------------

    def fault(self, target, kind, cuts_replica=True):
        """Records a fault beginning now (call it once the fault is in place)."""
        fault = Fault(target, kind, time.monotonic(), cuts_replica=cuts_replica)
        with self.lock:
            self.faults.append(fault)
        return fault

    def healed(self, fault):
        """Records a fault's end (call it just before lifting it)."""
        fault.end = time.monotonic()

    # ---- the checker ------------------------------------------------------------------

    def check(self, serve_throughout=()):
        """Reads the history: violations and figures. `serve_throughout` names the
        replicas that must never have refused a call for staleness or availability."""
        out = Outcome()
        served = [c for c in self.calls if c.code == grpc.StatusCode.OK]
        refused = {}
        for c in self.calls:
            if c.code != grpc.StatusCode.OK:
                refused[c.code.name] = refused.get(c.code.name, 0) + 1
        out.figures["calls"] = len(self.calls)
        out.figures["served"] = len(served)
        out.figures["refused"] = refused
        out.figures["stale_refusals"] = sum(
            1 for c in self.calls
            if c.code == grpc.StatusCode.UNAVAILABLE and "stale" in c.detail)

        # Revocations: never honoured past the bound.
        late = 0.0
        for c in served:
            if c.token_id in self.revoked:
                after = c.start - self.revoked[c.token_id][1]
                late = max(late, after)
                if after >= self.bound:
                    out.violations.append(
                        f"{c.replica} served {c.method} with token {c.token_id} "
                        f"{after:.3f} s after its revocation was acknowledged")
        out.figures["revoked_token_served_after_s"] = round(late, 3)

        # Cut-off replicas: never served past the bound after the cut began.
        longest = 0.0
        for fault in self.faults:
            if not fault.cuts_replica:
                continue
            end = fault.end if fault.end is not None else float("inf")
            for c in served:
                if c.replica == fault.target and fault.start <= c.start < end:
                    staleness = c.start - fault.start
                    longest = max(longest, staleness)
                    if staleness >= self.bound:
                        out.violations.append(
                            f"{c.replica} served {c.method} {staleness:.3f} s into a "
                            f"{fault.kind}, past the bound of {self.bound} s")
        out.figures["longest_staleness_served_s"] = round(longest, 3)

        # A ciphertext of a key version sealed elsewhere during a cut cannot be opened
        # by a replica that has not heard of the version and cannot ask: it says so
        # (UNAVAILABLE, try another replica), which is not a refusal to serve.
        not_known_yet = [c for c in self.calls if c.code == grpc.StatusCode.UNAVAILABLE
                         and "newer than this replica knows of" in c.detail]
        out.figures["version_not_known_yet"] = len(not_known_yet)
        excused = {id(c) for c in not_known_yet}
        for name in serve_throughout:
            failed = [c for c in self.calls if c.replica == name and id(c) not in excused
                      and c.code in (grpc.StatusCode.UNAVAILABLE,
                                     grpc.StatusCode.DEADLINE_EXCEEDED,
                                     grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)]
            if failed:
                out.violations.append(
                    f"{name} should have served throughout but refused {len(failed)} calls, "
                    f"first {failed[0].code.name}: {failed[0].detail}")
        if self.wrong_plaintexts:
            out.violations.append(f"{self.wrong_plaintexts} opens returned the wrong plaintext")
        return out

    @staticmethod
    def admin_read(replica, method, request, seconds=15):
        """An admin call that waits out UNAVAILABLE: a healed etcd member rejoining
        can cost the cluster an election, and admin calls fail while etcd has no
        leader."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                return getattr(replica.admin, method)(
                    request, metadata=replica.admin_metadata, timeout=CALL_TIMEOUT)
            except grpc.RpcError as error:
                if code_of(error) != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    @staticmethod
    def settled(check, by):
        """Polls `check` (None once the state it looks for holds, else what it saw)
        until it holds or a call starts at or after `by` (time.monotonic()): what
        was acknowledged a moment ago is promised everywhere only within the bound,
        and when an answer arrives says little of when the replica decided. None, or
        what the last call saw."""
        while True:
            start = time.monotonic()
            seen = check()
            if seen is None or start >= by:
                return seen
            time.sleep(0.01)

    def seal_as(self, replica, token):
        """A Seal with `token`: None if served, else the error."""
        try:
            replica.crypto.Seal(data_pb2.SealRequest(key=self.key, plaintext=b"x"),
                                metadata=bearer(token), timeout=CALL_TIMEOUT)
            return None
        except grpc.RpcError as error:
            return error

    def verify_after_heal(self, out):
        """With every fault healed and every replica serving: each acknowledged change
        is in force on every replica (a revocation or rotation within the bound after
        its acknowledgement), and every ciphertext sealed during the run opens."""
        lost = 0
        with self.lock:
            live = dict(self.live)
            revoked = dict(self.revoked)
            sealed = list(self.sealed)
        # Every change was acknowledged before now (the load has stopped).
        settled_by = time.monotonic() + self.bound

        # Known to it as valid, a revoked token is refused once the revocation arrives:
        # served only before the bound after its acknowledgement.
        def revoked_refused(replica, token):
            error = self.seal_as(replica, token)
            if error is None:
                return "served"
            if code_of(error) == grpc.StatusCode.UNAUTHENTICATED:
                return None
            return f"{code_of(error).name} {error.details()}"

        for replica in self.replicas:
            for token_id, (token, acknowledged) in revoked.items():
                seen = self.settled(lambda: revoked_refused(replica, token),
                                    acknowledged + self.bound)
                if seen == "served":
                    lost += 1
                    out.violations.append(
                        f"{replica.name} still accepts token {token_id}, revoked")
                elif seen is not None:
                    out.violations.append(f"{replica.name}: token {token_id}, revoked: {seen}")
            # A token it has not heard of yet it looks up in the store before refusing.
            for token_id, token in live.items():
                error = self.seal_as(replica, token)
                if error is not None:
                    lost += 1
                    out.violations.append(f"{replica.name} refuses token {token_id}, issued: "
                                          f"{code_of(error).name} {error.details()}")
            least, most = 1 + self.rotations, 1 + self.rotations + self.unsure_rotations

            # Read from its snapshot: a rotation acknowledged elsewhere a moment ago may
            # reach it only later, within the bound.
            def primary_version():
                info = self.admin_read(replica, "GetKey",
                                       admin_pb2.KeyRef(tenant=self.tenant, key=self.key))
                return None if least <= info.primary_version <= most else info.primary_version
            version = self.settled(primary_version, settled_by)
            if version is not None:
                lost += 1
                out.violations.append(
                    f"{replica.name}: primary version {version} after "
                    f"{self.rotations} acknowledged rotations ({self.unsure_rotations} unsure)")
        unopened = 0
        token = next(iter(live.values()))
        # A version it has not heard of yet it looks up in the store before refusing.
        for i, (ciphertext, plaintext) in enumerate(sealed):
            replica = self.replicas[i % len(self.replicas)]
            try:
                opened = replica.crypto.Open(
                    data_pb2.OpenRequest(key=self.key, ciphertext=ciphertext),
                    metadata=bearer(token), timeout=CALL_TIMEOUT).plaintext
                if opened != plaintext:
                    unopened += 1
            except grpc.RpcError:
                unopened += 1
        if unopened:
            out.violations.append(f"{unopened} of {len(sealed)} ciphertexts no longer open")
        out.figures.update(acknowledged_changes_lost=lost, ciphertexts_checked=len(sealed),
                           ciphertexts_not_opening=unopened,
                           revocations=len(revoked), rotations=self.rotations)
        return out
