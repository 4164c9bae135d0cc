"""Which failures are tried again, and how long to wait between attempts
(docs/CLIENTS.md, "Retries")."""
import dataclasses
import random
import time
from typing import Callable, Optional, TypeVar

import grpc

from .errors import DeadlineExceededError, UnavailableError

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter: before attempt n+1 the client sleeps a
    random time up to min(max_backoff, initial_backoff * multiplier**(n-1)) seconds: by
    default up to about 7 s in all, enough for a server's restart. Only UNAVAILABLE is
    retried, and only for calls that are safe to repeat; every attempt fits in the
    call's one deadline. `max_attempts=1` turns retries off."""
    max_attempts: int = 8
    initial_backoff: float = 0.1
    max_backoff: float = 2.0
    multiplier: float = 2.0

    def backoff(self, attempt: int) -> float:
        """Seconds to sleep after failed attempt number `attempt` (1-based)."""
        ceiling = min(self.max_backoff, self.initial_backoff * self.multiplier ** (attempt - 1))
        return random.uniform(0, ceiling)


NO_RETRY = RetryPolicy(max_attempts=1)


def with_retries(policy: RetryPolicy, deadline: Optional[float],
                 attempt: Callable[[Optional[float]], T]) -> T:
    """Runs attempt(seconds left, or None without a deadline) until it returns, raises
    something other than UnavailableError, or the attempts or the deadline run out
    (DeadlineExceededError when it ran out before an attempt)."""
    number = 1
    while True:
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            # gRPC Python would take a deadline already past as none at all.
            raise DeadlineExceededError("the call's deadline passed before it was sent",
                                        grpc.StatusCode.DEADLINE_EXCEEDED)
        try:
            return attempt(remaining)
        except UnavailableError:
            if number >= policy.max_attempts:
                raise
            pause = policy.backoff(number)
            if deadline is not None and time.monotonic() + pause >= deadline:
                raise
            time.sleep(pause)
            number += 1

