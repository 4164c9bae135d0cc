package sealbox

import (
	"context"
	"errors"
	"math/rand"
	"sync"
	"time"
)

// RetryPolicy says how a call that met UNAVAILABLE is tried again: after a wait
// drawn uniformly from zero to InitialBackoff * 2^(retry-1), at most MaxBackoff
// ("full jitter", so that clients a restart disconnected together do not come back
// together), up to MaxAttempts attempts in all, and never past the call's
// deadline: a wait that would end after it returns the UnavailableError at once.
//
// Only UNAVAILABLE is retried, because only then did the server do nothing the
// caller could observe. Seal, Open, Rewrap, their batches and GenerateDataKey are
// retried (repeating one has no effect beyond its answer); RenewToken never (each
// call mints a successor, and a repeat could leave one nobody holds); SealStream,
// OpenStream and the files only before the first answer arrived and when the input
// can be read again (an io.Seeker, such as a file); a failed decryption never (it
// counts against the key's limit, and would fail again).
type RetryPolicy struct {
	// MaxAttempts counts every attempt, the first included: 1 never retries.
	// 0 means DefaultRetryPolicy's.
	MaxAttempts int
	// InitialBackoff caps the first wait; each later cap doubles. 0: the default's.
	InitialBackoff time.Duration
	// MaxBackoff caps every wait. 0: the default's.
	MaxBackoff time.Duration
	// OnRetry, when set, hears of each retry before its wait: the attempt that
	// failed (1 for the first), its error (an *UnavailableError) and the wait.
	OnRetry func(attempt int, err error, wait time.Duration)
}

// DefaultRetryPolicy: 8 attempts, waits capped at 100 ms, 200 ms, 400 ms, 800 ms,
// 1.6 s, then 2 s: up to about 7 s in all, enough to ride out a server's restart.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 8, InitialBackoff: 100 * time.Millisecond,
	MaxBackoff: 2 * time.Second}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultRetryPolicy.MaxAttempts
	}
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = DefaultRetryPolicy.InitialBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = DefaultRetryPolicy.MaxBackoff
	}
	return p
}

// backoffCap is the longest wait after the given failed attempt (1, 2, ...).
func (p RetryPolicy) backoffCap(attempt int) time.Duration {
	wait := p.InitialBackoff
	for i := 1; i < attempt && wait < p.MaxBackoff; i++ {
		wait *= 2
	}
	if wait > p.MaxBackoff {
		wait = p.MaxBackoff
	}
	return wait
}

var jitter = struct {
	sync.Mutex
	*rand.Rand
}{Rand: rand.New(rand.NewSource(time.Now().UnixNano()))}

// backoff draws the wait after the given failed attempt: full jitter.
func (p RetryPolicy) backoff(attempt int) time.Duration {
	jitter.Lock()
	defer jitter.Unlock()
	return time.Duration(jitter.Int63n(int64(p.backoffCap(attempt)) + 1))
}

// run makes attempts as the policy says; canRetry (when not nil) may refuse one.
func (p RetryPolicy) run(ctx context.Context, canRetry func() bool,
	attempt func(context.Context) error) error {
	for n := 1; ; n++ {
		err := fromRPC(attempt(ctx))
		var unavailable *UnavailableError
		if err == nil || !errors.As(err, &unavailable) || n >= p.MaxAttempts ||
			(canRetry != nil && !canRetry()) {
			return err
		}
		wait := p.backoff(n)
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return err
		}
		if p.OnRetry != nil {
			p.OnRetry(n, err, wait)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return fromRPC(ctx.Err())
		case <-timer.C:
		}
	}
}
