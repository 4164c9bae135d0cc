package sealbox

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/golang/protobuf/ptypes"
	"google.golang.org/grpc/codes"

	pb "sealbox.dev/go/sealbox/internal/sealboxv1"
)

// TokenRenewal makes the client renew its token with RenewToken before it
// expires: once less than a third of its life is left, or, when Expiry is not
// known, at the first call (whose answer tells it). The check runs before each
// call; the successor is used for every later call and handed to OnRenew so the
// program can store it. A renewal that fails is reported to OnError and tried again
// at the next call, while the old token keeps working until its own expiry; a
// token that cannot renew (one that never expires, FailedPreconditionError) stops
// the renewals.
type TokenRenewal struct {
	// Expiry is when the token given to New expires; zero when not known. Its life
	// is counted from New (the client does not know when it was issued).
	Expiry time.Time
	// OnRenew, when set, receives each successor and its expiry.
	OnRenew func(token string, expiry time.Time)
	// OnError, when set, hears of each renewal that failed.
	OnError func(err error)
}

// tokenState is the token calls carry, and when it should be renewed.
type tokenState struct {
	mu        sync.Mutex
	token     string
	renewal   *TokenRenewal // nil: never renewed by itself
	validFrom time.Time     // when its life is counted from
	expiry    time.Time     // zero: not known
	renewing  bool          // a renewal is in flight
	stopped   bool          // the token cannot renew
}

func newTokenState(token string, renewal *TokenRenewal) *tokenState {
	t := &tokenState{token: token, renewal: renewal, validFrom: time.Now()}
	if renewal != nil {
		t.expiry = renewal.Expiry
	}
	return t
}

func (t *tokenState) current() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.token
}

// due says whether to renew now, and if so marks a renewal in flight.
func (t *tokenState) due(now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.renewal == nil || t.renewing || t.stopped || t.token == "" {
		return false
	}
	if !t.expiry.IsZero() && t.expiry.Sub(now) >= t.expiry.Sub(t.validFrom)/3 {
		return false
	}
	t.renewing = true
	return true
}

func (t *tokenState) renewed(token string, expiry, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.token, t.expiry, t.validFrom = token, expiry, now
}

func (t *tokenState) done(stop bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.renewing = false
	t.stopped = t.stopped || stop
}

// renewIfDue renews the token before a call when TokenRenewal says so. Other
// calls meanwhile go on with the current token.
func (c *Client) renewIfDue(ctx context.Context) {
	if !c.tokens.due(time.Now()) {
		return
	}
	_, err := c.RenewToken(ctx, 0)
	var cannot *FailedPreconditionError
	c.tokens.done(errors.As(err, &cannot))
	if err != nil && c.tokens.renewal.OnError != nil {
		c.tokens.renewal.OnError(err)
	}
}

// RenewedToken is RenewToken's answer.
type RenewedToken struct {
	// Token is the successor, for `authorization: Bearer`; shown only this once.
	Token string
	// TokenID is its id, as ListTenants shows it and RevokeToken takes it.
	TokenID string
	// Expiry is when it stops working.
	Expiry time.Time
}

// RenewToken asks for a successor to the client's token, working for ttl (0: as
// long as the token was issued for, never past its max-ttl), and switches the
// client to it for every later call (and hands it to TokenRenewal.OnRenew when
// set). The old token keeps working until its own expiry. Never retried: each call
// mints a successor, and a repeat could leave one nobody holds. Fails with a
// FailedPreconditionError for a token that does not expire, one at its max-ttl,
// or a client identified by its certificate.
func (c *Client) RenewToken(ctx context.Context, ttl time.Duration) (*RenewedToken, error) {
	var r *pb.RenewTokenResponse
	err := c.do(ctx, callKind{unary: true}, nil, func(ctx context.Context) (err error) {
		req := &pb.RenewTokenRequest{}
		if ttl != 0 {
			req.Ttl = ptypes.DurationProto(ttl)
		}
		r, err = c.crypto.RenewToken(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	expiry, err := ptypes.Timestamp(r.ExpireTime)
	if err != nil {
		return nil, &SealboxError{Code: codes.Internal, Message: "RenewToken: bad expire_time: " + err.Error()}
	}
	now := time.Now()
	c.tokens.renewed(r.Token, expiry, now)
	if c.tokens.renewal != nil && c.tokens.renewal.OnRenew != nil {
		c.tokens.renewal.OnRenew(r.Token, expiry)
	}
	return &RenewedToken{Token: r.Token, TokenID: r.TokenId, Expiry: expiry}, nil
}
